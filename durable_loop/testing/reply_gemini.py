"""Builders for scripted Gemini ``generateContent`` replies
(``POST /v1beta/models/{model}:generateContent``; the script key is the model in the path)."""

from __future__ import annotations

from typing import Any

from durable_loop.testing.scripted import Reply

DEFAULT_USAGE = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}


def _candidate(parts: list[dict[str, Any]], finish: str, usage: dict[str, int] | None) -> Reply:
    return Reply(
        body={
            "candidates": [
                {"content": {"role": "model", "parts": parts}, "finishReason": finish, "index": 0}
            ],
            "usageMetadata": usage or DEFAULT_USAGE,
            "modelVersion": "scripted",
        }
    )


def text(content: str, *, usage: dict[str, int] | None = None, finish: str = "STOP") -> Reply:
    return _candidate([{"text": content}] if content else [], finish, usage)


def function_calls(
    *calls: tuple[str, dict[str, Any]] | tuple[str, dict[str, Any], str],
    content: str | None = None,
    usage: dict[str, int] | None = None,
    signature: str | None = None,
) -> Reply:
    """Each call is ``(name, args)`` or ``(name, args, id)``; Gemini usually sends no id.
    ``signature`` goes on the first call part, as Gemini 3 does."""
    parts: list[dict[str, Any]] = [{"text": content}] if content else []
    for index, call in enumerate(calls):
        function: dict[str, Any] = {"name": call[0], "args": call[1]}
        if len(call) > 2:
            function["id"] = call[2]
        part: dict[str, Any] = {"functionCall": function}
        if signature and index == 0:
            part["thoughtSignature"] = signature
        parts.append(part)
    return _candidate(parts, "STOP", usage)


def function_call(name: str, args: dict[str, Any]) -> Reply:
    return function_calls((name, args))


def error(
    status: int, state: str, message: str = "error", *, retry_delay_s: float | None = None
) -> Reply:
    body: dict[str, Any] = {"error": {"code": status, "message": message, "status": state}}
    if retry_delay_s is not None:
        body["error"]["details"] = [
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{retry_delay_s}s"}
        ]
    return Reply(status=status, body=body)


def resource_exhausted(retry_delay_s: float | None = None) -> Reply:
    return error(
        429, "RESOURCE_EXHAUSTED", "Resource has been exhausted", retry_delay_s=retry_delay_s
    )


def blocked(reason: str = "SAFETY") -> Reply:
    return Reply(body={"promptFeedback": {"blockReason": reason}, "usageMetadata": DEFAULT_USAGE})
