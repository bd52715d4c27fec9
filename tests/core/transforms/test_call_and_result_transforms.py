"""The parsed-tool-call transform and the tool-result transform, each on its own."""

from __future__ import annotations

import json

from durable_loop.core.envelope import Envelope
from durable_loop.core.messages import Message, ToolCall
from durable_loop.core.transforms.inbound import (
    assistant_tool_calls_arguments_blank_to_empty_object,
    tool_result_compact_envelope,
)
from durable_loop.core.transforms.pipeline import render_tool_results


def test_arguments_blank_to_empty_object():
    calls = [
        ToolCall(id="a", name="t", arguments=""),
        ToolCall(id="b", name="t", arguments="  \n"),
        ToolCall(id="c", name="t", arguments='{"x":1}'),
    ]
    out = assistant_tool_calls_arguments_blank_to_empty_object(calls)
    assert [c.arguments for c in out] == ["{}", "{}", '{"x":1}']
    assert calls[0].arguments == ""


def test_compact_envelope():
    ok = json.loads(Envelope.success({"n": 1}).to_content())
    assert tool_result_compact_envelope(ok) == {"ok": True, "data": {"n": 1}}
    failed = json.loads(Envelope.failure("TOOL_ERROR", "boom").to_content())
    assert tool_result_compact_envelope(failed) == {
        "ok": False,
        "errors": [{"code": "TOOL_ERROR", "message": "boom"}],
    }
    warned = json.loads(Envelope.success(None, warnings=["slow"]).to_content())
    assert tool_result_compact_envelope(warned)["warnings"] == ["slow"]


def test_results_render_through_the_transforms_into_content():
    messages = [
        Message.user("hi"),
        Message.tool_result("c1", "add", Envelope.success(5)),
    ]
    assert render_tool_results([], messages) == messages
    rendered = render_tool_results(["tool_result_compact_envelope"], messages)
    assert rendered[1].content == '{"data":5,"ok":true}'
    assert rendered[1].envelope == messages[1].envelope  # kept for is_error
    assert rendered[0] is messages[0]
