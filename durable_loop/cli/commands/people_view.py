"""How what waits for a person, and a person's decisions, read on the command line: one
shared wording for ``pending``, ``status``, ``proposals``, ``tool-calls`` and
``approve``/``reject``.

Every value a session or a person supplied (ids, tool names, arguments, approver names,
comments, summaries, paths) goes through :func:`~durable_loop.core.visible_text.visible`
here: a CR/LF in it cannot print a forged line, nor a bidi control reorder what a person
reads (``\\n``, ``\\u202e`` show instead)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from durable_loop.core.visible_text import visible, visible_json

if TYPE_CHECKING:
    from durable_loop.client.waiting import SessionWaiting
    from durable_loop.core.approval_models import PendingToolCall, ToolCallDecided
    from durable_loop.core.proposals import DecisionResult, PendingProposal

ARGS_SHOWN = 60


def waiting_lines(waiting: SessionWaiting) -> list[str]:
    """One line per held call and pending proposal: its id first (what approve takes)."""
    width = max((len(i) for i in _ids(waiting)), default=0)
    lines = [
        f"  {visible(c.call_id):<{width}}  {_held_as(c)}  {call_text(c, waiting.session_id)}"
        for c in waiting.tool_calls
    ]
    lines += [
        f"  {visible(p.proposal_id):<{width}}  proposal   {proposal_text(p)}"
        for p in waiting.proposals
    ]
    return lines


def _held_as(call: PendingToolCall) -> str:
    """``tool call`` waits for approval; ``in doubt `` for an answer (``tool-calls answer``)."""
    return "in doubt " if call.kind == "in_doubt" else "tool call"


def _ids(waiting: SessionWaiting) -> list[str]:
    ids = [c.call_id for c in waiting.tool_calls] + [p.proposal_id for p in waiting.proposals]
    return [visible(i) for i in ids]


def call_text(call: PendingToolCall, session_id: str) -> str:
    arguments = short(visible_json(call.arguments), ARGS_SHOWN)
    where = "" if call.session_id == session_id else f" (in sub-agent {visible(call.session_id)})"
    return f"{visible(call.shown_tool)} {arguments}{where}"


def proposal_text(proposal: PendingProposal) -> str:
    changes = ", ".join(f"{op.get('op')} {op.get('path')}" for op in proposal.changes)
    summary = f": {proposal.summary}" if proposal.summary else ""
    return short(visible(f"{changes}{summary}"), ARGS_SHOWN + 20)


def decide_hint(session_id: str) -> str:
    return (
        f"decide: durable-loop approve {visible(session_id)} ID --as YOU "
        f"(or reject; --comment for the model)"
    )


def pointer_to_calls(session_id: str, calls: list[PendingToolCall]) -> str:
    """What `proposals` says when no proposal but tool calls wait."""
    named = ", ".join(f"{visible(c.call_id)} ({visible(c.shown_tool)})" for c in calls[:5])
    more = f" and {len(calls) - 5} more" if len(calls) > 5 else ""
    return (
        f"no pending proposals, but {len(calls)} tool call(s) wait for approval: {named}{more}; "
        f"see `durable-loop pending {visible(session_id)}`"
    )


def pointer_to_proposals(session_id: str, proposals: list[PendingProposal]) -> str:
    """What `tool-calls list` says when no call but proposals wait."""
    named = ", ".join(visible(p.proposal_id) for p in proposals[:5])
    more = f" and {len(proposals) - 5} more" if len(proposals) > 5 else ""
    return (
        f"no tool calls wait for approval, but {len(proposals)} proposal(s) wait: {named}{more}; "
        f"see `durable-loop pending {visible(session_id)}`"
    )


def call_decided_line(decided: ToolCallDecided, *, with_tool: bool = False) -> str:
    """``c1 approved (edited: amount) by alice``; ``with_tool``: ``c1  pay  approved ...``."""
    from durable_loop.core.proposals import decided_word

    fields = ", ".join(visible(f) for f in decided.edited_fields)
    edited = f" (edited: {fields})" if decided.edited_fields else ""
    call_id = visible(decided.call_id)
    head = f"{call_id}  {visible(decided.tool)} " if with_tool else call_id
    return f"{head} {decided_word(decided.status)}{edited} by {visible(decided.decided_by)}"


def proposal_decided_line(result: DecisionResult) -> str:
    """``p1 committed by alice (facts version 3)``, the approver's name made visible."""
    return visible(f"{result.proposal_id} {result.describe()}")


def short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
