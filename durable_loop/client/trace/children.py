"""Sub-agent calls in the trace: each call that ran as a child workflow names the child's
session, how its task stands and its tokens (which the parent's total includes, as the
parent's results do). Pure."""

from __future__ import annotations

from collections.abc import Sequence

from durable_loop.client.trace.models import (
    CallRow,
    DecodedRun,
    SubAgentRun,
    SubAgentStatus,
    TurnRow,
)
from durable_loop.core.errors import CodedError
from durable_loop.core.messages import Usage


def _by_call(
    session_id: str, runs: Sequence[DecodedRun]
) -> dict[str, list[tuple[int, SubAgentRun]]]:
    """call id -> (result seq, child) of each sub-agent started, from the child's session
    id (``<parent>--<call id>-<result seq>``, see ``core.sub_agents.child_session_id``)."""
    prefix = f"{session_id}--"
    found: dict[str, list[tuple[int, SubAgentRun]]] = {}
    for run in runs:
        for child in run.sub_agents:
            rest = child.session_id.removeprefix(prefix)
            call_id, _, seq = rest.rpartition("-")
            if rest != child.session_id and call_id and seq.isdigit():
                found.setdefault(call_id, []).append((int(seq), child))
    return found


def _linked(call: CallRow, child: SubAgentRun) -> CallRow:
    task = child.task_result(call.call_id)
    status: SubAgentStatus
    error: CodedError | None
    if task is not None:
        status, error = task.status, task.error
    elif child.failure is not None:
        status, error = "failed", child.failure
    elif child.ended:
        status, error = "failed", None
    else:
        status, error = ("awaiting_approval" if child.held else "running"), None
    return call.model_copy(
        update={
            "sub_agent_session": child.session_id,
            "sub_agent_status": status,
            "sub_agent_error": error,
            "sub_agent_usage": child.usage if child.result is not None else None,
            "sub_agent_held": [] if child.ended else [h.call_id for h in child.held],
            "executed": True,  # it ran, as a child workflow
        }
    )


def link_sub_agents(
    turns: list[TurnRow], session_id: str, runs: Sequence[DecodedRun]
) -> list[TurnRow]:
    """Each sub-agent call with its child: the first child started for the call's id after
    the turn's assistant message (its result slot)."""
    children = _by_call(session_id, runs)
    if not children:
        return turns
    linked: list[TurnRow] = []
    for turn in turns:
        calls = []
        for call in turn.calls:
            after = sorted(
                ((seq, c) for seq, c in children.get(call.call_id, []) if seq > turn.assistant_seq),
                key=lambda pair: pair[0],
            )
            if call.result_seq is not None:
                after = [(seq, c) for seq, c in after if seq == call.result_seq] or after
            calls.append(_linked(call, after[0][1]) if after else call)
        linked.append(turn.model_copy(update={"calls": calls}))
    return linked


def sub_agent_usage(runs: Sequence[DecodedRun]) -> Usage:
    """The tokens of every sub-agent that ended (their own sub-agents' included)."""
    return sum((c.usage for r in runs for c in r.sub_agents), Usage())
