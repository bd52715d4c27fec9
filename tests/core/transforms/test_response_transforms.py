"""Inbound response transforms, each on its own (OpenAI-compatible bodies)."""

from __future__ import annotations

import json

from durable_loop.core.providers.openai_compat import OpenAICompatAdapter
from durable_loop.core.transforms.inbound import (
    InboundContext,
    assistant_content_json_tool_calls_to_tool_calls,
    assistant_content_tool_call_tags_to_tool_calls,
    assistant_function_call_to_tool_calls,
    assistant_tool_calls_arguments_json_string_if_hash,
    assistant_tool_calls_object_to_array,
)

CTX = InboundContext(call_id_prefix="5", tool_names=["add", "lookup"])


def body(message: dict, finish: str = "stop") -> dict:
    return {"choices": [{"index": 0, "message": message, "finish_reason": finish}]}


def parsed(wire: dict):
    return OpenAICompatAdapter().parse_response(wire, json.dumps(wire))


def test_function_call_to_tool_calls():
    legacy = body(
        {"role": "assistant", "content": None, "function_call": {"name": "add", "arguments": "{}"}},
        finish="function_call",
    )
    out = assistant_function_call_to_tool_calls(legacy, CTX)
    choice = out["choices"][0]
    assert "function_call" not in choice["message"]
    assert choice["message"]["tool_calls"][0]["id"] == "dlc_5_0"
    assert choice["finish_reason"] == "tool_calls"
    assert "function_call" in legacy["choices"][0]["message"]  # pure
    assert parsed(out).message.tool_calls[0].name == "add"


def test_tool_calls_object_to_array():
    one = {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{}"}}
    out = assistant_tool_calls_object_to_array(body({"role": "assistant", "tool_calls": one}), CTX)
    assert out["choices"][0]["message"]["tool_calls"] == [one]
    keyed = body({"role": "assistant", "tool_calls": {"0": one, "1": {**one, "id": "c2"}}})
    out = assistant_tool_calls_object_to_array(keyed, CTX)
    assert [c.id for c in parsed(out).message.tool_calls] == ["c1", "c2"]


def test_tool_calls_arguments_json_string_if_hash():
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "add", "arguments": {"b": 2, "a": 1}},
    }
    out = assistant_tool_calls_arguments_json_string_if_hash(
        body({"role": "assistant", "tool_calls": [call]}), CTX
    )
    assert out["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] == '{"a":1,"b":2}'
    text = {"id": "c1", "type": "function", "function": {"name": "add", "arguments": '{"a": 1}'}}
    same = body({"role": "assistant", "tool_calls": [text]})
    assert assistant_tool_calls_arguments_json_string_if_hash(same, CTX) == same


def test_content_tool_call_tags_to_tool_calls():
    content = (
        'Let me add.\n<tool_call>\n{"name": "add", "arguments": {"a": 2, "b": 3}}\n'
        '</tool_call>\n<tool_call>{"name": "lookup", "arguments": {"q": "x"}}</tool_call>'
    )
    out = assistant_content_tool_call_tags_to_tool_calls(
        body({"role": "assistant", "content": content}), CTX
    )
    reply = parsed(out)
    assert [(c.id, c.name, c.arguments) for c in reply.message.tool_calls] == [
        ("dlc_5_0", "add", '{"a":2,"b":3}'),
        ("dlc_5_1", "lookup", '{"q":"x"}'),
    ]
    assert reply.message.content == "Let me add."
    assert reply.finish_reason == "tool_calls"


def test_content_tags_leave_real_tool_calls_and_plain_text_alone():
    plain = body({"role": "assistant", "content": "No tools needed: 5."})
    assert assistant_content_tool_call_tags_to_tool_calls(plain, CTX) == plain
    broken = body({"role": "assistant", "content": "<tool_call>not json</tool_call>"})
    assert assistant_content_tool_call_tags_to_tool_calls(broken, CTX) == broken
    call = {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{}"}}
    real = body({"role": "assistant", "content": "<tool_call>{}</tool_call>", "tool_calls": [call]})
    assert assistant_content_tool_call_tags_to_tool_calls(real, CTX) == real


def test_content_json_tool_calls_to_tool_calls():
    fenced = '```json\n{"name": "add", "arguments": {"a": 1, "b": 2}}\n```'
    reply = parsed(
        assistant_content_json_tool_calls_to_tool_calls(
            body({"role": "assistant", "content": fenced}), CTX
        )
    )
    assert [(c.name, c.arguments) for c in reply.message.tool_calls] == [("add", '{"a":1,"b":2}')]
    assert reply.message.content is None
    bare = '{"name": "lookup", "parameters": {"q": "y"}}'
    reply = parsed(
        assistant_content_json_tool_calls_to_tool_calls(
            body({"role": "assistant", "content": bare}), CTX
        )
    )
    assert reply.message.tool_calls[0].arguments == '{"q":"y"}'


def test_content_json_call_in_doubled_braces_is_read():
    """Qwen2.5-Coder's stock template shows its call example in doubled braces; the model
    copies them (measured on llama.cpp 2026.10, docs/evals.md)."""
    for content in (
        '{{"name": "lookup", "arguments": {"q": "z"}}}',
        '<tool_call>\n{{"name": "lookup", "arguments": {"q": "z"}}}\n</tool_call>',
    ):
        wire = body({"role": "assistant", "content": content})
        for transform in (
            assistant_content_json_tool_calls_to_tool_calls,
            assistant_content_tool_call_tags_to_tool_calls,
        ):
            out = parsed(transform(wire, CTX))
            if out.message.tool_calls:
                assert [(c.name, c.arguments) for c in out.message.tool_calls] == [
                    ("lookup", '{"q":"z"}')
                ]
                break
        else:
            raise AssertionError(f"no transform read {content!r}")
    tripled = body({"role": "assistant", "content": '{{{"name": "add", "arguments": {}}}}'})
    assert assistant_content_json_tool_calls_to_tool_calls(tripled, CTX) == tripled


def test_content_json_needs_a_sent_tool_name():
    unknown = body({"role": "assistant", "content": '{"name": "rm_rf", "arguments": {}}'})
    assert assistant_content_json_tool_calls_to_tool_calls(unknown, CTX) == unknown
    answer = body({"role": "assistant", "content": '{"name": "Ada", "age": 36}'})
    assert assistant_content_json_tool_calls_to_tool_calls(answer, CTX) == answer
    no_tools = InboundContext(call_id_prefix="5")
    call = body({"role": "assistant", "content": '{"name": "add", "arguments": {}}'})
    assert assistant_content_json_tool_calls_to_tool_calls(call, no_tools) == call


def test_response_transforms_leave_other_providers_bodies_alone():
    anthropic = {"type": "message", "content": [{"type": "text", "text": "<tool_call>{}"}]}
    for transform in (
        assistant_function_call_to_tool_calls,
        assistant_tool_calls_object_to_array,
        assistant_tool_calls_arguments_json_string_if_hash,
        assistant_content_tool_call_tags_to_tool_calls,
        assistant_content_json_tool_calls_to_tool_calls,
    ):
        assert transform(anthropic, CTX) == anthropic
