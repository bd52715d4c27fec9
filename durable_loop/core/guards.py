"""Checks the workflow applies to a turn's tool calls before anything executes.

Masking, the per-turn limit, duplicate call ids, argument size and JSON validity, and the
repeated-identical-call guard are decided here from summaries alone, so a refused call
costs no activity round trip.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from durable_loop.core.activity_contracts import ToolCallSummary
from durable_loop.core.config import RuntimeConfig
from durable_loop.core.errors import CodedError, ErrorCode
from durable_loop.core.recoveries import (
    ask_for_unsaid_values,
    refuse_unasked_call,
    repeated_call_guard,
)

Action = Literal["execute", "reject", "reuse"]
REPEAT_UNKNOWN_PATCH_ID = "repeat-unknown-tool-call"
"""An identical call of a tool that does not exist, refused before in the message, is a
repeat: the local model otherwise calls a made-up tool until the turn limit."""


class CallDecision(BaseModel):
    call: ToolCallSummary
    action: Action
    result_seq: int
    error: CodedError | None = None
    reuse_seq: int | None = None
    ignored: bool = False
    made_up: bool = False
    """A reuse of a call refused with TOOL_NOT_FOUND: the tool does not exist."""


class TurnPlan(BaseModel):
    decisions: list[CallDecision]
    ignored: int
    repeated: bool
    unasked: CallDecision | None = None
    """The first call refused for values nobody gave (the loop then finalizes)."""
    unasked_by: str | None = None
    """The recovery that refused it: ``refuse_unasked_call`` or ``ask_for_unsaid_values``."""


def call_key(name: str, args_sha256: str) -> str:
    return f"{name}:{args_sha256}"


def _reject(call: ToolCallSummary, seq: int, code: ErrorCode, message: str) -> CallDecision:
    return CallDecision(
        call=call, action="reject", result_seq=seq, error=CodedError(code=code, message=message)
    )


def too_large_message(call: ToolCallSummary, limit: int) -> str:
    over = call.args_bytes - limit
    where = (
        f" The longest value is {call.args_largest}: replace it with a summary at least "
        f"{over} characters shorter (do not send the same text again) and call "
        f"{call.name} again."
        if call.args_largest
        else " Retry with shorter arguments."
    )
    return f"arguments are {call.args_bytes} bytes; the limit is {limit}.{where}"


def plan_turn(
    calls: list[ToolCallSummary],
    *,
    registered: set[str],
    visible: set[str],
    tools_sent: bool,
    config: RuntimeConfig,
    seen_calls: dict[str, int],
    first_result_seq: int,
    patched: Callable[[str], bool],
    refused_unknown: dict[str, int],
) -> TurnPlan:
    """Decide, per call in emitted order, whether to execute, refuse or reuse it.

    ``seen_calls`` maps ``name:args_sha256`` of calls executed earlier in this message's
    loop to the seq of their recorded result; ``refused_unknown`` does the same for calls
    refused earlier with TOOL_NOT_FOUND (a tool that does not exist), whose identical
    repeat the repeated-call guard answers too (patch ``repeat-unknown-tool-call``).
    ``patched`` is ``workflow.patched``, asked only where a recovery behind a patch would
    act.
    """
    limit = config.effective_max_tool_calls_per_turn()
    checks = CallChecks(
        registered=registered,
        visible=visible if tools_sent else set(),
        max_args_bytes=config.max_tool_args_bytes,
    )
    decisions: list[CallDecision] = []
    ids_seen: set[str] = set()
    called = {key.split(":", 1)[0] for key in seen_calls}
    unasked: CallDecision | None = None
    unasked_by: str | None = None
    for position, call in enumerate(calls):
        seq = first_result_seq + position
        if limit is not None and position >= limit:
            decisions.append(over_limit(call, seq, limit))
            continue
        refused = refusal(call, checks, duplicate=call.id in ids_seen)
        ids_seen.add(call.id)
        by = unsaid_refusal(call, called, config, patched) if refused is None else None
        if by is not None:
            refused = (
                ErrorCode.ARGUMENTS_NOT_GIVEN,
                UNSAID_MESSAGES[by](call.name, call.args_unsaid),
            )
        repeat = unknown_repeat(call, seq, refused, refused_unknown, config, patched)
        if repeat is not None:
            decisions.append(repeat)
        elif refused is not None:
            decisions.append(_reject(call, seq, *refused))
            if by is not None and unasked is None:
                unasked, unasked_by = decisions[-1], by
        else:
            decisions.append(
                run_or_reuse(call, seq, config.uses(repeated_call_guard.NAME), seen_calls)
            )
            called.add(call.name)
    return TurnPlan(
        decisions=decisions,
        ignored=sum(d.ignored for d in decisions),
        repeated=any(d.action == "reuse" for d in decisions),
        unasked=unasked,
        unasked_by=unasked_by,
    )


@dataclass(frozen=True)
class CallChecks:
    registered: set[str]
    visible: set[str]
    """Empty when the request sent no tools: then no call is allowed."""
    max_args_bytes: int


def over_limit(call: ToolCallSummary, seq: int, limit: int) -> CallDecision:
    decision = _reject(
        call,
        seq,
        ErrorCode.TOO_MANY_TOOL_CALLS,
        f"not executed: at most {limit} tool call(s) per turn; call it again next turn",
    )
    return decision.model_copy(update={"ignored": True})


def refusal(
    call: ToolCallSummary, checks: CallChecks, *, duplicate: bool
) -> tuple[ErrorCode, str] | None:
    """The first check ``call`` fails, in the order the codes are documented; None if none."""
    if duplicate:
        return ErrorCode.DUPLICATE_CALL_ID, f"call id {call.id!r} repeated"
    if call.name not in checks.registered:
        return ErrorCode.TOOL_NOT_FOUND, f"no tool named {call.name!r}"
    if call.name not in checks.visible:
        return ErrorCode.TOOL_NOT_ALLOWED, f"tool {call.name!r} is not available"
    if call.args_bytes > checks.max_args_bytes:
        return ErrorCode.ARGUMENTS_TOO_LARGE, too_large_message(call, checks.max_args_bytes)
    if not call.args_valid_json:
        return (
            ErrorCode.INVALID_JSON,
            "arguments are not a JSON object; send arguments as a JSON object",
        )
    return None


UNSAID_MESSAGES: dict[str, Callable[[str, list[str]], str]] = {
    refuse_unasked_call.NAME: refuse_unasked_call.refusal_message,
    ask_for_unsaid_values.NAME: ask_for_unsaid_values.refusal_message,
}


def unsaid_refusal(
    call: ToolCallSummary, called: set[str], config: RuntimeConfig, patched: Callable[[str], bool]
) -> str | None:
    """The recovery that refuses ``call`` for values nobody gave, if one does: after another
    tool's call ``refuse_unasked_call``, as the message's first ``ask_for_unsaid_values``
    (each patch asked only when it would act)."""
    if (
        config.uses(refuse_unasked_call.NAME)
        and refuse_unasked_call.unasked(call.name, call.args_unsaid, called)
        and patched(refuse_unasked_call.PATCH_ID)
    ):
        return refuse_unasked_call.NAME
    if (
        config.uses(ask_for_unsaid_values.NAME)
        and ask_for_unsaid_values.applies(call.args_unsaid, called)
        and patched(ask_for_unsaid_values.PATCH_ID)
    ):
        return ask_for_unsaid_values.NAME
    return None


def unknown_repeat(
    call: ToolCallSummary,
    seq: int,
    refused: tuple[ErrorCode, str] | None,
    refused_unknown: dict[str, int],
    config: RuntimeConfig,
    patched: Callable[[str], bool],
) -> CallDecision | None:
    """The reuse of an identical call refused earlier with TOOL_NOT_FOUND, when the
    repeated-call guard is on (its patch asked only then)."""
    earlier = refused_unknown.get(call_key(call.name, call.args_sha256))
    if (
        refused is None
        or refused[0] != ErrorCode.TOOL_NOT_FOUND
        or earlier is None
        or not config.uses(repeated_call_guard.NAME)
        or not patched(REPEAT_UNKNOWN_PATCH_ID)
    ):
        return None
    return CallDecision(call=call, action="reuse", result_seq=seq, reuse_seq=earlier, made_up=True)


def run_or_reuse(
    call: ToolCallSummary, seq: int, guard_repeats: bool, seen_calls: dict[str, int]
) -> CallDecision:
    """Execute, or reuse the recorded result of an identical call executed earlier."""
    key = call_key(call.name, call.args_sha256)
    if guard_repeats and key in seen_calls:
        return CallDecision(call=call, action="reuse", result_seq=seq, reuse_seq=seen_calls[key])
    return CallDecision(call=call, action="execute", result_seq=seq)
