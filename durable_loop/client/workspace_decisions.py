"""The decisions people (and the expiry timer) made, as sentences: who approved or rejected
which tool call or proposal, when, on which arguments, and who changed a session's budget.
Read from a :class:`WorkspaceView`'s audit rows; the CLI and the workspace page print the
same lines, so "who approved this payment?" needs no ``--json``."""

from __future__ import annotations

import json
from datetime import datetime

from pydantic import BaseModel, Field, JsonValue

from durable_loop.client.workspace import ARGS_CHARS, AuditLine, WorkspaceView
from durable_loop.core.outcome import preview
from durable_loop.core.proposals import NOT_COMMITTED

DOCUMENT_TARGETS = frozenset({"facts", "draft", "locks", "workspace"})
"""Audit targets that are changes to the workspace itself, not decisions."""
TOOL_VERBS = {
    "confirm": "approved",
    "edit": "approved with edits",
    "reject": "rejected",
    "discard": "discarded the late body's result of",
}
PROPOSAL_VERBS = {
    "confirm": "approved",
    "reject": "rejected",
    "conflict": "approved",
    "fail": "approved",
}


class DecisionLine(BaseModel):
    """One decision (or session change) as a person reads it."""

    when: datetime | None = None
    actor: str
    actor_kind: str
    text: str = Field(description="The sentence: who did what to which call or proposal")
    session_id: str | None = None
    call_id: str | None = None
    proposal_id: str | None = None
    arguments: str | None = Field(default=None, description="The call's arguments (model's)")
    ran_with: str | None = Field(default=None, description="The arguments after an edit")
    comment: str | None = None

    def details(self) -> list[tuple[str, str]]:
        """(label, text) lines under the sentence."""
        pairs = [
            ("arguments", self.arguments),
            ("ran with", self.ran_with),
            ("comment", self.comment),
        ]
        return [(label, text) for label, text in pairs if text]


def decision_lines(view: WorkspaceView) -> list[DecisionLine]:
    """The view's decisions and session changes, oldest first."""
    lines = []
    for row in view.audit:
        text = _sentence(row, view.session_id)
        if text is None:
            continue
        edited = _value(row, "arguments") if row.op == "edit" else None
        lines.append(
            DecisionLine(
                when=row.created_at,
                actor=row.actor,
                actor_kind=row.actor_kind,
                text=text,
                session_id=row.session_id,
                call_id=row.call_id,
                proposal_id=row.proposal_id,
                arguments=row.arguments,
                ran_with=_json(edited) if edited is not None else None,
                comment=row.comment,
            )
        )
    return lines


def _sentence(row: AuditLine, session_id: str | None) -> str | None:
    where = f" in session {row.session_id}" if row.session_id not in (None, session_id) else ""
    if row.target == "tool":
        if row.op == "allow":
            return (
                f"{row.actor} approved every later call of {row.path or '?'}{where}"
                + (f" until {_value(row, 'expires_at')}" if _value(row, "expires_at") else "")
                + (" matching a condition" if _value(row, "condition") else "")
            )
        if row.op == "withdraw":
            set_on = f" (set on {row.call_id})" if row.call_id else ""
            return f"{row.actor} withdrew the standing approval of {row.path or '?'}{set_on}{where}"
        call = f"tool call {row.call_id or '?'} ({_about(row.path, row.turn)}){where}"
        return _decision(row, call, TOOL_VERBS)
    if row.target == "proposal":
        if row.op == "propose":
            return None  # the model's proposal is a change to the workspace, not a decision
        proposal = f"proposal {row.proposal_id or '?'}{where}"
        sentence = _decision(row, proposal, PROPOSAL_VERBS)
        if row.op in NOT_COMMITTED:
            sentence += f", not committed: {NOT_COMMITTED[row.op]}"
        elif row.op == "confirm":
            sentence += " (committed)"
        return sentence
    if row.target in DOCUMENT_TARGETS:
        return None
    value = "" if row.value is None else f" = {_json(row.value)}"
    return f"{row.actor} set {row.target} {row.path.lstrip('/')}{value}{where}"


def _decision(row: AuditLine, subject: str, verbs: dict[str, str]) -> str:
    if row.op == "expire":
        return f"{subject} expired without a decision"
    if row.op == "refused":
        code, message = _value(row, "code"), _value(row, "message")
        why = f"{code}: {message}" if code else str(message or "")
        return f"{row.actor}'s decision on {subject} was refused: {why}"
    verb = verbs.get(row.op, row.op)
    edited = _value(row, "edited_fields")
    fields = f" (changed {', '.join(map(str, edited))})" if isinstance(edited, list) else ""
    return f"{row.actor} {verb} {subject}{fields}"


def _about(tool: str, turn: int | None) -> str:
    return f"{tool or '?'}, turn {turn}" if turn is not None else tool or "?"


def _value(row: AuditLine, key: str) -> JsonValue:
    return row.value.get(key) if isinstance(row.value, dict) else None


def _json(value: JsonValue) -> str:
    return preview(json.dumps(value, ensure_ascii=False), ARGS_CHARS)
