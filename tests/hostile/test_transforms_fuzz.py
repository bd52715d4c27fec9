"""Hostile input through every named transform: transforms are total functions (they
never raise), never change their input in place, and keep results storable."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from durable_loop.core.envelope import Envelope
from durable_loop.core.messages import Message, ToolCall
from durable_loop.core.tools import ToolSpec
from durable_loop.core.transforms import pipeline as transforms
from durable_loop.core.transforms.inbound import InboundContext
from durable_loop.core.transforms.names import (
    MESSAGE_TRANSFORMS,
    RESPONSE_TRANSFORMS,
    TOOL_CALL_TRANSFORMS,
    TOOL_RESULT_TRANSFORMS,
)
from durable_loop.core.transforms.outbound import OutboundContext
from durable_loop.core.transforms.text_calls import parse_json_calls, parse_tagged_calls
from durable_loop.testing import reply
from tests.hostile.budget import fuzz, hit
from tests.hostile.strategies import (
    DEEP_TEXT,
    JSON_VALUES,
    NASTY_TEXT,
    RAW_ARGUMENTS,
    TEXT,
    mutated,
)

CONTEXT = InboundContext(call_id_prefix="3", tool_names=["add", "search"])
OPENAI_BODIES = [
    reply.text("plain").body,
    reply.tool_calls(("add", {"a": 1}), ("search", "{bad"), content="").body,
    {"choices": [{"message": {"role": "assistant", "function_call": {"name": "add"}}}]},
    {"choices": [{"message": {"role": "assistant", "tool_calls": {"function": {"name": "x"}}}}]},
]
WIRE_MESSAGES = [
    {"role": "assistant", "content": " ", "tool_calls": [{"id": "a", "function": {}}]},
    {"role": "model", "parts": [{"functionCall": {"name": "add", "args": {}}}]},
    {"role": "tool", "tool_call_id": "a", "content": "{}"},
]


@st.composite
def call_text(draw: st.DrawFn) -> str:
    """Assistant text that may hold calls written as text, well-formed or not."""
    inner = draw(
        st.one_of(
            RAW_ARGUMENTS,
            DEEP_TEXT,
            st.builds(
                lambda name, args: json.dumps({"name": name, "arguments": args}, allow_nan=True),
                st.sampled_from(["add", "search", "facts_commit", ""]),
                JSON_VALUES,
            ),
        )
    )
    wrap = draw(
        st.sampled_from(["<tool_call>{}</tool_call>", "<tool_call>{}", "```json\n{}\n```", "{}"])
    )
    return draw(NASTY_TEXT) + wrap.replace("{}", inner, 1) + draw(NASTY_TEXT)


@st.composite
def openai_bodies(draw: st.DrawFn) -> dict:
    body = copy.deepcopy(draw(st.sampled_from(OPENAI_BODIES)))
    if draw(st.booleans()):
        body["choices"][0]["message"]["content"] = draw(st.one_of(call_text(), TEXT))
    body = draw(mutated(body))
    return body if isinstance(body, dict) else {"choices": body}


@pytest.mark.parametrize("name", RESPONSE_TRANSFORMS)
@fuzz(200)
@given(body=openai_bodies())
def test_response_transforms_are_total(name: str, body: dict) -> None:
    hit("transforms: response")
    before = copy.deepcopy(body)
    out = transforms.transform_response([name], body, CONTEXT)
    assert json.dumps(body, allow_nan=True) == json.dumps(before, allow_nan=True)
    assert isinstance(out, dict)


@fuzz(500)
@given(content=st.one_of(call_text(), TEXT))
@example(content="<tool_call>" + "[" * 100_000 + "</tool_call>")
@example(content="```json\n" + '{"a":' * 100_000 + "\n```")
@example(content='{"name": "add", "arguments": ' + "[" * 100_000)
def test_text_call_parsers_are_total(content: str) -> None:
    hit("transforms: text calls")
    for calls, rest in (
        parse_tagged_calls(content),
        parse_json_calls(content, ["add", "search"]),
    ):
        assert isinstance(rest, str)
        for call in calls:
            assert call.name
            assert isinstance(call.arguments, str)
    for call in parse_json_calls(content, ["add", "search"])[0]:
        assert call.name in {"add", "search"}


@fuzz(300)
@given(
    calls=st.lists(
        st.builds(ToolCall, id=NASTY_TEXT, name=NASTY_TEXT, arguments=RAW_ARGUMENTS), max_size=4
    )
)
def test_tool_call_transforms_are_total(calls: list[ToolCall]) -> None:
    hit("transforms: tool calls")
    message = Message(role="assistant", tool_calls=calls)
    out = transforms.transform_tool_calls(list(TOOL_CALL_TRANSFORMS), message)
    assert [c.id for c in out.tool_calls] == [c.id for c in calls]
    assert all(c.arguments.strip() for c in out.tool_calls)


@fuzz(300)
@given(
    data=JSON_VALUES,
    ok=st.booleans(),
    warnings=st.lists(NASTY_TEXT, max_size=3),
    message=NASTY_TEXT,
)
def test_tool_result_transforms_are_total(
    data: object, ok: bool, warnings: list[str], message: str
) -> None:
    hit("transforms: tool results")
    clean = json.loads(json.dumps(data, allow_nan=False)) if _finite(data) else None
    envelope = (
        Envelope(ok=True, data=clean, warnings=warnings)
        if ok
        else Envelope.failure("TOOL_ERROR", message, clean)
    )
    stored = Message.tool_result("c", "t", envelope)
    rendered = transforms.render_tool_results(list(TOOL_RESULT_TRANSFORMS), [stored])
    assert rendered[0].content is not None
    json.loads(rendered[0].content)


@pytest.mark.parametrize("name", MESSAGE_TRANSFORMS)
@fuzz(100)
@given(data=st.data())
def test_message_transforms_are_total(name: str, data: st.DataObject) -> None:
    hit("transforms: outbound messages")
    wire = [data.draw(mutated(m)) for m in WIRE_MESSAGES]
    before = json.dumps(wire, allow_nan=True)
    body = transforms.transform_wire_messages([name], {"messages": wire}, "messages")
    assert json.dumps(wire, allow_nan=True) == before
    assert len(body["messages"]) == len(wire)  # type: ignore[arg-type]


@fuzz(100)
@given(description=TEXT)
def test_tool_transforms_are_total(description: str) -> None:
    hit("transforms: tool definitions")
    spec = ToolSpec(name="t", description=description, parameters={"type": "object"})
    out = transforms.transform_tools(
        ["openai_tools_strip_function_descriptions"], [spec], OutboundContext()
    )
    assert [t.description for t in out] == [""]


def _finite(value: object) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except ValueError:
        return False
    return True
