"""Streamed chat completion events reassemble into the ordinary response body."""

from __future__ import annotations

import json

from durable_loop.core.providers.base import ProviderRequest
from durable_loop.core.providers.openai_compat import OpenAICompatAdapter
from durable_loop.core.providers.openai_stream import ChunkAssembler, streaming_request


def event(delta: dict, finish: str | None = None) -> dict:
    return {
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def test_parallel_tool_call_deltas_merge_by_index_and_usage_is_kept():
    assembler = ChunkAssembler()
    stream = [
        event({"role": "assistant", "content": None}),
        event(
            {"tool_calls": [{"index": 0, "id": "c0", "function": {"name": "add", "arguments": ""}}]}
        ),
        event(
            {
                "tool_calls": [
                    {"index": 1, "id": "c1", "function": {"name": "nap", "arguments": '{"s'}}
                ]
            }
        ),
        event({"tool_calls": [{"index": 0, "function": {"arguments": '{"a": 1}'}}]}),
        event({"tool_calls": [{"index": 1, "function": {"arguments": '": 2}'}}]}),
        event({}, "tool_calls"),
        {"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 3}},
    ]
    assert [assembler.feed(e) for e in stream] == [""] * len(stream)
    body = assembler.body()
    reply = OpenAICompatAdapter().parse_response(body, json.dumps(body))
    assert [(c.id, c.name, c.arguments) for c in reply.message.tool_calls] == [
        ("c0", "add", '{"a": 1}'),
        ("c1", "nap", '{"s": 2}'),
    ]
    assert reply.message.content is None and reply.finish_reason == "tool_calls"
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (7, 3)


def test_a_llama_cpp_stream_keeps_the_cached_prompt_tokens_of_its_timings():
    assembler = ChunkAssembler()
    assembler.feed(event({"content": "Hi"}))
    assembler.feed(
        {
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 278, "completion_tokens": 1},
            "timings": {"cache_n": 255, "prompt_n": 23},
        }
    )
    body = assembler.body()
    usage = OpenAICompatAdapter().parse_response(body, json.dumps(body)).usage
    assert (usage.input_tokens, usage.cached_tokens) == (278, 255)


def test_text_deltas_are_returned_as_they_come():
    assembler = ChunkAssembler()
    pieces = [assembler.feed(event({"content": p})) for p in ("Hel", "lo")]
    assembler.feed(event({}, "stop"))
    assert pieces == ["Hel", "lo"]
    assert assembler.body()["choices"][0]["message"]["content"] == "Hello"


def test_streaming_request_adds_the_flags_and_keeps_the_body():
    request = ProviderRequest(endpoint="/chat/completions", body={"model": "m", "messages": []})
    streamed = streaming_request(request)
    assert streamed.body == {
        "model": "m",
        "messages": [],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    assert "stream" not in request.body
