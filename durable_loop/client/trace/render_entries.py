"""One line per trace entry: who decided, changed, cancelled or was refused what.

Names, ids, comments and arguments that people or the model supplied are made visible
(:mod:`durable_loop.core.visible_text`): a CR/LF in an approver's name cannot print a line
of its own, nor a bidi control reorder the entry (``\\n``, ``\\u202e`` show instead).
"""

from __future__ import annotations

from rich.text import Text

from durable_loop.client.trace.entries import (
    BudgetChangeEntry,
    CancelEntry,
    CloseEntry,
    ModelSwitchEntry,
    ProposalDecisionEntry,
    RefusalEntry,
    ToolCallDecisionEntry,
    TraceEntry,
    UnknownUpdateEntry,
)
from durable_loop.core.budget import SessionBudget
from durable_loop.core.tool_names import joined_name
from durable_loop.core.visible_text import visible, visible_json

EDIT_CHARS = 200
"""Characters of edited arguments an entry shows."""

_TOOL_WORDS = {"approved": "approved", "approved_with_edits": "approved", "rejected": "rejected"}
_ASKED = {
    "decide_tool_call": "decision on {}",
    "tool_call_decision": "decision on {}",
    "decide_proposal": "decision on proposal {}",
    "proposal_decision": "decision on proposal {}",
    "cancel_message": "cancel of {}",
    "message_result": "wait for message {}",
    "send_message": "message {}",
    "set_budget": "budget change",
    "switch_model": "model switch",
}
"""What each refused request asked for ({}: what it named)."""
_PROPOSAL_WORDS = {"approve": "approved", "reject": "rejected", "expire": "expired"}


def _quoted(comment: str | None) -> str:
    return f' — "{visible(comment)}"' if comment else ""


def named_tool(name: str, original_name: str | None) -> str:
    """``joined_name``, shown safely."""
    return visible(joined_name(name, original_name))


def _tool_decision(entry: ToolCallDecisionEntry) -> Text:
    tool = named_tool(entry.tool, entry.original_name) if entry.tool else ""
    call = f"{tool} {visible(entry.call_id)}".strip()
    if entry.sub_agent_session:
        call += f" (sub-agent session {visible(entry.sub_agent_session)})"
    by = visible(entry.by)
    if entry.outcome is None:
        line = Text(f"{by} decided on {call}; not settled in this session", style="yellow")
    elif entry.outcome == "expired":
        line = Text(f"{call} expired without a decision", style="yellow")
        if entry.by.startswith("system:") and entry.by != "system:expiry":
            line.append(f" ({by})", style="dim")
    else:
        style = "red" if entry.outcome == "rejected" else "green"
        line = Text(f"{by} {_TOOL_WORDS[entry.outcome]} {call}", style=style)
    if entry.edited_fields:
        line.append(f" with edits ({', '.join(visible(f) for f in entry.edited_fields)})")
    if entry.standing is not None:
        line.append(f" by a standing approval (set on {visible(entry.standing)})")
    if entry.remembered is not None:
        until = f" for {entry.remembered.for_s:g} s" if entry.remembered.for_s else ""
        when = " when the arguments match a condition" if entry.remembered.condition else ""
        line.append(f", and later calls of {visible(entry.tool) or 'the tool'}{until}{when}")
    line.append(_quoted(entry.comment))
    if entry.edited_fields and entry.arguments is not None:
        edited = visible_json(entry.arguments)
        if len(edited) > EDIT_CHARS:
            edited = f"{edited[:EDIT_CHARS]}… ({len(edited)} chars)"
        line.append(f"; runs with {edited}", style="dim")
    return line


def _proposal_decision(entry: ProposalDecisionEntry) -> Text:
    what = f"proposal {visible(entry.proposal_id)}"
    if entry.verdict == "expire":
        line = Text(f"{what} expired without a decision", style="yellow")
    else:
        style = "green" if entry.verdict == "approve" else "red"
        line = Text(f"{visible(entry.by)} {_PROPOSAL_WORDS[entry.verdict]} {what}", style=style)
    if entry.status is None:
        line.append(": settling", style="yellow")
    elif entry.status == "committed":
        line.append(f": committed (facts version {entry.facts_version})")
    elif entry.status not in ("rejected", "expired"):
        line.append(f": not committed ({entry.status})", style="red")
    if entry.error is not None:
        line.append(f" {visible(str(entry.error))}", style="red")
    line.append(_quoted(entry.comment))
    return line


def _budget_changes(before: SessionBudget, after: SessionBudget) -> str:
    def tokens(budget: SessionBudget) -> str:
        limit = budget.max_session_tokens
        return "no limit" if limit is None else str(limit)

    changes = []
    if before.max_session_tokens != after.max_session_tokens:
        changes.append(f"session tokens {tokens(before)} → {tokens(after)}")
    if before.max_turns != after.max_turns:
        changes.append(f"turns per message {before.max_turns} → {after.max_turns}")
    return ", ".join(changes) or "unchanged"


def _budget(entry: BudgetChangeEntry) -> Text:
    line = Text(f"{visible(entry.by)} changed the budget")
    if entry.previous is not None and entry.budget is not None:
        line.append(f": {_budget_changes(entry.previous, entry.budget)}")
    else:
        line.append(": applying", style="yellow")
    if entry.used_tokens is not None:
        line.append(f" ({entry.used_tokens} tokens used)", style="dim")
    line.append(_quoted(entry.comment))
    return line


def _switch(entry: ModelSwitchEntry) -> Text:
    line = Text(f"model switched: {entry.previous_model or '?'} → {entry.model}")
    if entry.fallback_models:
        line.append(f" (fallbacks {', '.join(entry.fallback_models)})", style="dim")
    return line


def _cancel(entry: CancelEntry) -> Text:
    what = f"message {visible(entry.message_id)}" if entry.message_id else "the running message"
    line = Text(f"cancel of {what}", style="yellow")
    if entry.reason and entry.reason != "cancelled":
        line.append(f': "{visible(entry.reason)}"')
    if entry.status is not None:
        line.append(f" → {entry.status}", style="dim")
    return line


def _refusal(entry: RefusalEntry) -> Text:
    who = f"{visible(entry.by)}'s " if entry.by else ""
    template = _ASKED.get(entry.name, visible(entry.name) + " {}")
    asked = template.replace("{}", visible(entry.target or "the running message")).strip()
    line = Text(f"refused {who}{asked}: ", style="red")
    line.append(entry.error.code, style="bold red")
    if entry.error.message:
        line.append(f" {visible(entry.error.message)}")
    return line


def _unknown(entry: UnknownUpdateEntry) -> Text:
    state = "completed" if entry.completed else "running"
    what = "unreadable" if entry.unreadable else "unknown"
    line = Text(f"{what} update {entry.name!r} ({state})", style="magenta")
    if entry.error is not None:
        line.append(f" {entry.error}", style="red")
    return line


def entry_text(entry: TraceEntry) -> Text:
    """The entry as one line (wrapped by the console), with how it arrived."""
    if isinstance(entry, ToolCallDecisionEntry):
        line = _tool_decision(entry)
    elif isinstance(entry, ProposalDecisionEntry):
        line = _proposal_decision(entry)
    elif isinstance(entry, BudgetChangeEntry):
        line = _budget(entry)
    elif isinstance(entry, ModelSwitchEntry):
        line = _switch(entry)
    elif isinstance(entry, CancelEntry):
        line = _cancel(entry)
    elif isinstance(entry, CloseEntry):
        line = Text(f"session closed: {entry.reason}", style="yellow")
    elif isinstance(entry, RefusalEntry):
        line = _refusal(entry)
    else:
        line = _unknown(entry)
    how = entry.via if entry.via == "timer" else f"{entry.via} {entry.name}".strip()
    line.append(f"  [{how}]", style="dim")
    return Text("» ", style="bold") + line
