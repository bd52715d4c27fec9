"""Audit rows of decisions on held tool calls, and of refused decisions, in the
workspace's append-only audit log.

Each row is keyed (``workspace_writes``), so a retried activity, also after a worker crash
between the write and the reply, records a decision once.
"""

from __future__ import annotations

from sqlalchemy import Connection, insert, select

from durable_loop.core.proposals import DecisionAudit
from durable_loop.store.database import insert_ignore
from durable_loop.store.workspace import RECORDED, WorkspaceStore
from durable_loop.store.workspace_base import WRITES, WS, ChangeSource, retrying


async def record_decision(store: WorkspaceStore, audit: DecisionAudit) -> bool:
    """Append the row unless its key was recorded; True if it was written now."""

    def attempt(conn: Connection) -> bool:
        if conn.execute(RECORDED, {"key": audit.key}).first() is not None:
            return False
        conn.execute(insert_ignore(WS, conn.dialect.name), {"workspace_id": audit.workspace_id})
        version = conn.execute(
            select(WS.c.version).where(WS.c.workspace_id == audit.workspace_id)
        ).scalar_one()
        source = ChangeSource(
            actor=audit.actor,
            actor_kind=audit.actor_kind,
            session_id=audit.session_id,
            turn=audit.turn,
            call_id=audit.call_id,
            proposal_id=audit.proposal_id,
            comment=audit.comment,
        )
        entry = (audit.target, audit.op, audit.path, audit.value)
        store.record(conn, audit.workspace_id, version, source, [entry])
        written = {"idempotency_key": audit.key, "workspace_id": audit.workspace_id}
        conn.execute(insert(WRITES), [{**written, "result_json": "{}"}])
        return True

    return await retrying(lambda: store.db.write(attempt, inline=True))
