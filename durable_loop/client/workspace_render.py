"""Rendering a :class:`WorkspaceView` as Rich tables: facts and draft by path, locks, and
the newest audit rows."""

from __future__ import annotations

import json

from pydantic import JsonValue
from rich.console import Console
from rich.table import Table

from durable_loop.client.workspace import WorkspaceView, document_rows
from durable_loop.core.outcome import preview

VALUE_CHARS = 100


def _json(value: JsonValue) -> str:
    return preview(json.dumps(value, ensure_ascii=False), VALUE_CHARS)


def document_table(title: str, document: dict[str, JsonValue], locks: list[str]) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("path")
    table.add_column("value")
    table.add_column("locked")
    for row in document_rows(document, locks):
        table.add_row(row.path, _json(row.value), "locked" if row.locked else "")
    return table


def audit_table(view: WorkspaceView) -> Table:
    table = Table(title=f"audit (newest {len(view.audit)})", title_justify="left")
    for column in ("version", "when (UTC)", "actor", "change", "proposal", "comment"):
        table.add_column(column)
    for row in view.audit:
        value = "" if row.value is None else f" = {_json(row.value)}"
        when = row.created_at.strftime("%Y-%m-%d %H:%M:%S") if row.created_at else ""
        table.add_row(
            str(row.version),
            when,
            f"{row.actor} ({row.actor_kind})",
            f"{row.target} {row.op} {row.path}{value}",
            row.proposal_id or "",
            row.comment or "",
        )
    return table


def print_workspace(view: WorkspaceView, console: Console | None = None) -> None:
    console = console or Console()
    session = f" of session {view.session_id}" if view.session_id else ""
    if not view.exists:
        console.print(
            f"workspace {view.workspace_id}{session}: nothing written yet", highlight=False
        )
        return
    console.print(
        f"workspace {view.workspace_id}{session} · version {view.version} · "
        f"facts version {view.facts_version}",
        highlight=False,
    )
    for title, document in (("facts", view.facts), ("draft", view.draft)):
        if document:
            console.print(document_table(title, document, view.locks))
        else:
            console.print(f"{title}: empty", highlight=False)
    console.print("locks: " + (", ".join(view.locks) or "none"), highlight=False)
    console.print(audit_table(view))
