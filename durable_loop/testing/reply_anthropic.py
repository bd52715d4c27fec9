"""Builders for scripted Anthropic Messages API replies (``POST /v1/messages``)."""

from __future__ import annotations

from typing import Any

from durable_loop.testing.scripted import Reply

DEFAULT_USAGE = {"input_tokens": 10, "output_tokens": 5}


def _message(content: list[dict[str, Any]], stop: str, usage: dict[str, int] | None) -> Reply:
    return Reply(
        body={
            "id": "msg_scripted",
            "type": "message",
            "role": "assistant",
            "model": "scripted",
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage or DEFAULT_USAGE,
        }
    )


def text(content: str, *, usage: dict[str, int] | None = None, stop: str = "end_turn") -> Reply:
    return _message([{"type": "text", "text": content}] if content else [], stop, usage)


def tool_calls(
    *calls: tuple[str, dict[str, Any]] | tuple[str, dict[str, Any], str],
    content: str | None = None,
    usage: dict[str, int] | None = None,
) -> Reply:
    """Each call is ``(name, input)`` or ``(name, input, tool_use_id)``."""
    blocks: list[dict[str, Any]] = [{"type": "text", "text": content}] if content else []
    for index, call in enumerate(calls):
        call_id = call[2] if len(call) > 2 else f"toolu_{index}_{call[0]}"
        blocks.append({"type": "tool_use", "id": call_id, "name": call[0], "input": call[1]})
    return _message(blocks, "tool_use", usage)


def tool_call(name: str, arguments: dict[str, Any], call_id: str | None = None) -> Reply:
    return tool_calls((name, arguments, call_id or f"toolu_0_{name}"))


def error(
    status: int, error_type: str, message: str = "error", *, retry_after: float | None = None
) -> Reply:
    headers = {"retry-after": str(retry_after)} if retry_after is not None else {}
    body = {"type": "error", "error": {"type": error_type, "message": message}}
    return Reply(status=status, body=body, headers=headers)


def overloaded() -> Reply:
    return error(529, "overloaded_error", "Overloaded")
