"""How what waits for a person, and a person's decisions, read on the command line: one
shared wording for ``pending``, ``status``, ``proposals``, ``tool-calls`` and
``approve``/``reject``."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from durable_loop.client.waiting import SessionWaiting
    from durable_loop.core.approval_models import PendingToolCall, ToolCallDecided
    from durable_loop.core.proposals import DecisionResult, PendingProposal

ARGS_SHOWN = 60


def waiting_lines(waiting: SessionWaiting) -> list[str]:
    """One line per held call and pending proposal: its id first (what approve takes)."""
    width = max((len(i) for i in _ids(waiting)), default=0)
    lines = [
        f"  {c.call_id:<{width}}  tool call  {call_text(c, waiting.session_id)}"
        for c in waiting.tool_calls
    ]
    lines += [
        f"  {p.proposal_id:<{width}}  proposal   {proposal_text(p)}" for p in waiting.proposals
    ]
    return lines


def _ids(waiting: SessionWaiting) -> list[str]:
    return [c.call_id for c in waiting.tool_calls] + [p.proposal_id for p in waiting.proposals]


def call_text(call: PendingToolCall, session_id: str) -> str:
    arguments = short(json.dumps(call.arguments, ensure_ascii=False), ARGS_SHOWN)
    where = "" if call.session_id == session_id else f" (in sub-agent {call.session_id})"
    return f"{call.tool} {arguments}{where}"


def proposal_text(proposal: PendingProposal) -> str:
    changes = ", ".join(f"{op.get('op')} {op.get('path')}" for op in proposal.changes)
    summary = f": {proposal.summary}" if proposal.summary else ""
    return short(f"{changes}{summary}", ARGS_SHOWN + 20)


def decide_hint(session_id: str) -> str:
    return (
        f"decide: durable-loop approve {session_id} ID --as YOU "
        f"(or reject; --comment for the model)"
    )


def pointer_to_calls(session_id: str, calls: list[PendingToolCall]) -> str:
    """What `proposals` says when no proposal but tool calls wait."""
    named = ", ".join(f"{c.call_id} ({c.tool})" for c in calls[:5])
    more = f" and {len(calls) - 5} more" if len(calls) > 5 else ""
    return (
        f"no pending proposals, but {len(calls)} tool call(s) wait for approval: {named}{more}; "
        f"see `durable-loop pending {session_id}`"
    )


def pointer_to_proposals(session_id: str, proposals: list[PendingProposal]) -> str:
    """What `tool-calls list` says when no call but proposals wait."""
    named = ", ".join(p.proposal_id for p in proposals[:5])
    more = f" and {len(proposals) - 5} more" if len(proposals) > 5 else ""
    return (
        f"no tool calls wait for approval, but {len(proposals)} proposal(s) wait: {named}{more}; "
        f"see `durable-loop pending {session_id}`"
    )


def call_decided_line(decided: ToolCallDecided, *, with_tool: bool = False) -> str:
    """``c1 approved (edited: amount) by alice``; ``with_tool``: ``c1  pay  approved ...``."""
    from durable_loop.core.proposals import decided_word

    edited = f" (edited: {', '.join(decided.edited_fields)})" if decided.edited_fields else ""
    head = f"{decided.call_id}  {decided.tool} " if with_tool else decided.call_id
    return f"{head} {decided_word(decided.status)}{edited} by {decided.decided_by}"


def proposal_decided_line(result: DecisionResult) -> str:
    return f"{result.proposal_id} {result.describe()}"


def short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
