"""Reading OpenAI-compatible replies: the documented shape, the drift compatible servers
produce (refused with a pointer to the opt-in transform, or repaired by it) and garbage."""

from __future__ import annotations

import json

import pytest

from durable_loop.core.providers import ProviderFormatError
from durable_loop.core.providers.base import loads_lenient
from durable_loop.core.providers.openai_compat import OpenAICompatAdapter
from durable_loop.core.transforms.inbound import InboundContext
from durable_loop.core.transforms.pipeline import transform_response, transform_tool_calls

ADAPTER = OpenAICompatAdapter()
CTX = InboundContext(call_id_prefix="s7", tool_names=["add"])


def body(message: dict, finish: str = "stop", usage: dict | None = None) -> dict:
    return {"choices": [{"message": message, "finish_reason": finish}], "usage": usage}


def parse(payload, transforms: list[str] | None = None):
    raw = json.dumps(payload)
    return ADAPTER.parse_response(transform_response(transforms or [], payload, CTX), raw)


def call(name="add", arguments='{"a": 1}', call_id="c1") -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def test_documented_shape():
    usage = {
        "prompt_tokens": 12,
        "completion_tokens": 3,
        "prompt_tokens_details": {"cached_tokens": 8},
    }
    reply = parse(
        body({"role": "assistant", "content": None, "tool_calls": [call()]}, "tool_calls", usage)
    )
    assert [(c.id, c.name, c.arguments) for c in reply.message.tool_calls] == [
        ("c1", "add", '{"a": 1}')
    ]
    assert reply.message.content is None and reply.finish_reason == "tool_calls"
    assert (reply.usage.input_tokens, reply.usage.output_tokens, reply.usage.cached_tokens) == (
        12,
        3,
        8,
    )


def test_content_parts_are_joined():
    parts = [{"type": "text", "text": "Hel"}, {"type": "text", "text": "lo"}, "junk"]
    assert parse(body({"role": "assistant", "content": parts})).message.content == "Hello"


def test_tool_calls_as_an_object_is_refused_unless_the_transform_is_on():
    drifted = body({"role": "assistant", "tool_calls": call()}, "tool_calls")
    with pytest.raises(ProviderFormatError, match="assistant_tool_calls_object_to_array"):
        parse(drifted)
    reply = parse(drifted, ["assistant_tool_calls_object_to_array"])
    assert [c.id for c in reply.message.tool_calls] == ["c1"]


def test_arguments_as_an_object_is_refused_unless_the_transform_is_on():
    drifted = body({"role": "assistant", "tool_calls": [call(arguments={"b": 2, "a": 1})]})
    with pytest.raises(
        ProviderFormatError, match="assistant_tool_calls_arguments_json_string_if_hash"
    ):
        parse(drifted)
    reply = parse(drifted, ["assistant_tool_calls_arguments_json_string_if_hash"])
    assert reply.message.tool_calls[0].arguments == '{"a":1,"b":2}'


@pytest.mark.parametrize("arguments", [None, "", "  "])
def test_blank_arguments_become_an_empty_object_with_the_transform(arguments):
    reply = parse(body({"role": "assistant", "tool_calls": [call(arguments=arguments)]}))
    assert not reply.message.tool_calls[0].arguments.strip()
    fixed = transform_tool_calls(
        ["assistant_tool_calls_arguments_blank_to_empty_object"], reply.message
    )
    assert fixed.tool_calls[0].arguments == "{}"


def test_legacy_function_call_is_read_only_through_its_transform():
    legacy = body(
        {"role": "assistant", "function_call": {"name": "add", "arguments": "{}"}}, "function_call"
    )
    with pytest.raises(ProviderFormatError, match="assistant_function_call_to_tool_calls"):
        parse(legacy)
    converted = parse(legacy, ["assistant_function_call_to_tool_calls"])
    assert converted.finish_reason == "tool_calls"
    assert [(c.id, c.name) for c in converted.message.tool_calls] == [("dlc_s7_0", "add")]


def test_missing_call_id_is_refused():
    with pytest.raises(ProviderFormatError, match=r"tool_calls\[0\] has no id"):
        parse(body({"role": "assistant", "tool_calls": [call(call_id=None)]}))


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        ([1, 2], "not a JSON object"),
        ({"error": "x"}, "no choices"),
        ({"choices": []}, "no choices"),
        ({"choices": [{"finish_reason": "stop"}]}, "message is missing"),
        (body({"role": "assistant", "content": 42}), "neither text nor parts"),
        (body({"role": "assistant", "tool_calls": ["add"]}), "not an object"),
        (
            body({"role": "assistant", "tool_calls": [{"id": "c", "function": {}}]}),
            "no function name",
        ),
    ],
)
def test_garbage_is_a_format_error(payload, reason):
    with pytest.raises(ProviderFormatError, match=reason):
        parse(payload)


def test_non_json_body_is_a_format_error_with_a_bounded_snippet():
    with pytest.raises(ProviderFormatError, match="not JSON") as caught:
        loads_lenient("<html>" + "x" * 2000)
    assert caught.value.snippet.startswith("<html>") and len(caught.value.snippet) == 500
