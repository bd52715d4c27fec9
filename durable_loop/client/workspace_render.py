"""Rendering a :class:`WorkspaceView` as Rich tables: facts and draft by path, locks, the
decisions people made (who approved which call, on which arguments) and the newest audit
rows."""

from __future__ import annotations

import json

from pydantic import JsonValue
from rich.box import SIMPLE_HEAD
from rich.console import Console
from rich.table import Table
from rich.text import Text

from durable_loop.client.workspace import AuditLine, WorkspaceView, document_rows
from durable_loop.client.workspace_decisions import DecisionLine, decision_lines
from durable_loop.core.outcome import preview

VALUE_CHARS = 100
DECISION_OPS = {"confirm": "approve"}
"""The stored verdict ``confirm`` reads as the verb people use (approve)."""


def _json(value: JsonValue) -> str:
    return preview(json.dumps(value, ensure_ascii=False), VALUE_CHARS)


def document_table(title: str, document: dict[str, JsonValue], locks: list[str]) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("path")
    table.add_column("value")
    table.add_column("locked")
    for row in document_rows(document, locks):
        table.add_row(Text(row.path), Text(_json(row.value)), "locked" if row.locked else "")
    return table


def _when(row: AuditLine | DecisionLine) -> str:
    when = row.created_at if isinstance(row, AuditLine) else row.when
    return when.strftime("%Y-%m-%d %H:%M:%S") if when else ""


def _change(row: AuditLine) -> str:
    op = DECISION_OPS.get(row.op, row.op) if row.target in ("tool", "proposal") else row.op
    value = "" if row.value is None else f" = {_json(row.value)}"
    return f"{row.target} {op} {row.path}{value}"


def decisions_table(lines: list[DecisionLine]) -> Table:
    """One entry per decision: when, then the sentence and its arguments and comment."""
    table = Table.grid(padding=(0, 2))
    table.title = f"decisions ({len(lines)})"
    table.title_justify = "left"
    table.add_column("when (UTC)", no_wrap=True)
    table.add_column("decision")
    for line in lines:
        body = Text(line.text)
        for label, text in line.details():
            body.append(f"\n{label}: ", style="dim")
            body.append(text)
        table.add_row(_when(line), body)
    return table


def audit_table(view: WorkspaceView) -> Table:
    """One row per audit entry; who changed what, from which proposal and why share one
    column, so the table stays readable at 80 columns."""
    table = Table(title=f"audit (newest {len(view.audit)})", title_justify="left", box=SIMPLE_HEAD)
    table.add_column("version", justify="right")
    table.add_column("when (UTC)", no_wrap=True)
    table.add_column("who: change")
    for row in view.audit:
        text = f"{row.actor} ({row.actor_kind}): {_change(row)}"
        if row.proposal_id:
            text += f" · proposal {row.proposal_id}"
        if row.comment:
            text += f" · comment: {row.comment}"
        table.add_row(str(row.version), _when(row), Text(text))  # Text: not Rich markup
    return table


def print_workspace(view: WorkspaceView, console: Console | None = None) -> None:
    console = console or Console()
    session = f" of session {view.session_id}" if view.session_id else ""
    if not view.exists and not view.audit:
        console.print(
            f"workspace {view.workspace_id}{session}: nothing written yet",
            highlight=False,
            markup=False,
        )
        return
    console.print(
        f"workspace {view.workspace_id}{session} · version {view.version} · "
        f"facts version {view.facts_version}",
        highlight=False,
        markup=False,
    )
    if view.exists:
        for title, document in (("facts", view.facts), ("draft", view.draft)):
            if document:
                console.print(document_table(title, document, view.locks))
            else:
                console.print(f"{title}: empty", highlight=False)
        console.print("locks: " + (", ".join(view.locks) or "none"), highlight=False, markup=False)
    else:
        console.print("facts, draft and locks: nothing written yet", highlight=False)
    decisions = decision_lines(view)
    if decisions:
        console.print(decisions_table(decisions))
    if view.audit:
        console.print(audit_table(view))
