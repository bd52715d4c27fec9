"""Builders for scripted OpenAI-compatible replies."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from durable_loop.testing.scripted import Reply


def _completion(message: dict[str, Any], finish: str, usage: dict[str, int] | None) -> Reply:
    return Reply(
        body={
            "id": "chatcmpl-scripted",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage or {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
    )


def text(content: str | None, *, usage: dict[str, int] | None = None) -> Reply:
    return _completion({"role": "assistant", "content": content}, "stop", usage)


def tool_calls(
    *calls: tuple[str, Any] | tuple[str, Any, str],
    content: str | None = None,
    usage: dict[str, int] | None = None,
) -> Reply:
    """Each call is ``(name, arguments)`` or ``(name, arguments, call_id)``; arguments may be
    a dict (encoded as a JSON string, as OpenAI does) or a raw string sent as-is."""
    wire = []
    for index, call in enumerate(calls):
        name, arguments = call[0], call[1]
        call_id = call[2] if len(call) > 2 else f"call_{index}_{name}"
        wire.append(
            {
                "id": call_id,
                "type": "function",
                "function": {
                    "name": name,
                    "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
                },
            }
        )
    return _completion(
        {"role": "assistant", "content": content, "tool_calls": wire}, "tool_calls", usage
    )


def tool_call(name: str, arguments: Any, call_id: str | None = None) -> Reply:
    return tool_calls((name, arguments, call_id or f"call_0_{name}"))


def error(status: int, message: str = "error", *, retry_after: float | None = None) -> Reply:
    headers = {"retry-after": str(retry_after)} if retry_after is not None else {}
    return Reply(status=status, body={"error": {"message": message}}, headers=headers)


def raw(status: int, text: str, content_type: str = "text/html") -> Reply:
    return Reply(status=status, raw=text, headers={"content-type": content_type})


def slow(reply: Reply, seconds: float) -> Reply:
    return dataclasses.replace(reply, delay_s=seconds)
