"""How a message's loop is judged once the model gives a final answer."""

from __future__ import annotations

import json

from durable_loop.core.config import RuntimeConfig, ToolFailurePolicy, ToolUseMode
from durable_loop.core.errors import CodedError, ErrorCode


def judge_final(
    config: RuntimeConfig, *, tool_calls_made: int, last_ok_by_tool: dict[str, bool]
) -> CodedError | None:
    """Apply ``tool_use_mode`` and ``tool_failure_policy`` to a finished loop.

    In enforced mode a run needs at least one tool call. ``fatal`` then fails the run when
    any tool's *last* result was an error (a tool that failed and was retried successfully
    has recovered); ``tolerated`` only needs one successful result.
    """
    if config.tool_use_mode is not ToolUseMode.ENFORCED:
        return None
    if tool_calls_made == 0:
        return CodedError(
            code=ErrorCode.NO_TOOL_CALLS,
            message="tool_use_mode=enforced but the model answered without calling a tool",
        )
    if config.tool_failure_policy is ToolFailurePolicy.FATAL:
        failed = sorted(name for name, ok in last_ok_by_tool.items() if not ok)
        if failed:
            return CodedError(
                code=ErrorCode.TOOL_ERROR,
                message=f"tool_failure_policy=fatal and these tools ended in error: {failed}",
            )
        return None
    if not any(last_ok_by_tool.values()):
        return CodedError(
            code=ErrorCode.TOOL_ERROR,
            message="tool_failure_policy=tolerated needs at least one successful tool result",
        )
    return None


def preview(text: str | None, limit: int = 160) -> str:
    if not text:
        return ""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def failure_text(codes: list[str], text: str, limit: int = 300) -> str:
    """One line naming why a tool call failed, for a retry prompt: the first error of the
    result envelope when ``text`` is one (else ``text`` itself), prefixed by its code."""
    message = text
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("errors"), list) and body["errors"]:
        first = body["errors"][0]
        if isinstance(first, dict):
            message = f"{first.get('code', '')}: {first.get('message', '')}"
    elif codes and not text.startswith(codes[0]):
        message = f"{codes[0]}: {text}"
    return preview(message, limit)
