"""Audit rows of decisions on held tool calls, of refused decisions, and of the late bodies
of ``effect="once"`` calls whose results were discarded, in the workspace's append-only
audit log.

Each row is keyed (``workspace_writes``), so a retried activity, also after a worker crash
between the write and the reply, records a decision once. A decision row may carry work of
its own (``also``) that commits in its transaction: an answer to a call in doubt settles the
call's attempts there (:mod:`durable_loop.store.tool_attempts`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from pydantic import BaseModel, JsonValue
from sqlalchemy import Connection, insert, select

from durable_loop.core.proposals import DecisionAudit
from durable_loop.store.database import insert_ignore
from durable_loop.store.workspace import RECORDED, WorkspaceStore
from durable_loop.store.workspace_base import WRITES, WS, ChangeSource, retrying

AlsoInTransaction = Callable[[Connection], dict[str, JsonValue]]
"""Work done in the audit row's transaction; what it returns joins the row's value."""

LATE_BODY_ACTOR = "system:worker"
DISCARD_OP = "discard"


class DiscardedBody(BaseModel):
    """A once call's body that finished after its call was settled without it."""

    workspace_id: str
    session_id: str
    call_id: str
    turn: int
    tool: str
    attempt: int
    finished_at: datetime
    settled_by: str
    why: str
    """``after the call was settled`` or ``after its activity timed out``"""
    key: str

    def sentence(self) -> str:
        when = self.finished_at.strftime("%Y-%m-%d %H:%M:%S UTC")
        return (
            f"the body of attempt {self.attempt} finished at {when}, {self.why}; "
            f"the call is settled by {self.settled_by}; result discarded"
        )


def _append(
    conn: Connection,
    store: WorkspaceStore,
    key: str,
    workspace_id: str,
    source: ChangeSource,
    entry: tuple[str, str, str, JsonValue],
) -> bool:
    """Append one keyed row unless its key was recorded; True if it was written now."""
    if conn.execute(RECORDED, {"key": key}).first() is not None:
        return False
    conn.execute(insert_ignore(WS, conn.dialect.name), {"workspace_id": workspace_id})
    version = conn.execute(
        select(WS.c.version).where(WS.c.workspace_id == workspace_id)
    ).scalar_one()
    store.record(conn, workspace_id, version, source, [entry])
    written = {"idempotency_key": key, "workspace_id": workspace_id}
    conn.execute(insert(WRITES), [{**written, "result_json": "{}"}])
    return True


async def record_decision(
    store: WorkspaceStore, audit: DecisionAudit, also: AlsoInTransaction | None = None
) -> bool:
    """Append the row unless its key was recorded; True if it was written now. ``also``
    runs first even then: it must be idempotent (settling is an insert-if-absent)."""

    def attempt(conn: Connection) -> bool:
        value = audit.value
        if also is not None:
            value = {**(value if isinstance(value, dict) else {}), **also(conn)}
        source = ChangeSource(
            actor=audit.actor,
            actor_kind=audit.actor_kind,
            session_id=audit.session_id,
            turn=audit.turn,
            call_id=audit.call_id,
            proposal_id=audit.proposal_id,
            comment=audit.comment,
        )
        entry = (audit.target, audit.op, audit.path, value)
        return _append(conn, store, audit.key, audit.workspace_id, source, entry)

    return await retrying(lambda: store.db.write(attempt, inline=True))


async def record_discarded_body(store: WorkspaceStore, body: DiscardedBody) -> bool:
    """One row (target ``tool``, op ``discard``) naming when the body finished and who had
    settled the call; never the body's result."""
    source = ChangeSource(
        actor=LATE_BODY_ACTOR,
        actor_kind="system",
        session_id=body.session_id,
        turn=body.turn,
        call_id=body.call_id,
        comment=body.sentence(),
    )
    value: dict[str, JsonValue] = {
        "attempt": body.attempt,
        "finished_at": body.finished_at.isoformat(),
        "settled_by": body.settled_by,
    }
    entry = ("tool", DISCARD_OP, body.tool, value)
    return await retrying(
        lambda: store.db.write(
            lambda conn: _append(conn, store, body.key, body.workspace_id, source, entry),
            inline=True,
        )
    )
