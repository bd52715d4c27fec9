"""Builders for scripted streaming chat completions (server-sent ``chat.completion.chunk``
events, as OpenAI-compatible servers send for ``stream: true``)."""

from __future__ import annotations

import json
from typing import Any

from durable_loop.testing.scripted import Reply

DEFAULT_USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


def _event(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _sse(events: list[dict[str, Any]], usage: dict[str, int] | None, pace_s: float = 0.0) -> Reply:
    usage_event = {"id": "chatcmpl-scripted", "choices": [], "usage": usage or DEFAULT_USAGE}
    lines = [f"data: {json.dumps(e)}\n\n" for e in [*events, usage_event]]
    return Reply(
        raw="".join(lines) + "data: [DONE]\n\n",
        headers={"content-type": "text/event-stream"},
        pace_s=pace_s,
    )


def text(*pieces: str, usage: dict[str, int] | None = None, pace_s: float = 0.0) -> Reply:
    """``pace_s``: a slow stream, one event every ``pace_s`` seconds."""
    events = [_event({"role": "assistant", "content": ""})]
    events += [_event({"content": piece}) for piece in pieces]
    events.append(_event({}, "stop"))
    return _sse(events, usage, pace_s)


def tool_call(
    name: str,
    argument_pieces: list[str],
    call_id: str = "call_0",
    usage: dict[str, int] | None = None,
) -> Reply:
    """One call whose arguments arrive in pieces, as streamed tool calls do."""
    first = {
        "index": 0,
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": ""},
    }
    events = [_event({"role": "assistant", "content": None, "tool_calls": [first]})]
    events += [
        _event({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
        for piece in argument_pieces
    ]
    events.append(_event({}, "tool_calls"))
    return _sse(events, usage)
