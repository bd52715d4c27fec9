"""Changes a person makes to a running session (its budget), in the workspace audit log
beside the decisions: who, what, when, in which session. Idempotent by the change's key."""

from __future__ import annotations

from temporalio import activity

from durable_loop.core import names
from durable_loop.core.budget import SessionChangeAudit, SessionChangeAudited
from durable_loop.store.workspace import WorkspaceStore
from durable_loop.store.workspace_base import ChangeSource


class SessionAuditActivities:
    def __init__(self, store: WorkspaceStore) -> None:
        self.store = store

    @activity.defn(name=names.AUDIT_SESSION_CHANGE)
    async def audit_session_change(self, inp: SessionChangeAudit) -> SessionChangeAudited:
        source = ChangeSource(
            actor=inp.actor,
            actor_kind="human",
            session_id=inp.session_id,
            comment=inp.comment,
            idempotency_key=f"{inp.what}:{inp.session_id}:{inp.key}",
        )
        entries = [(inp.what, "set", f"/{field}", value) for field, value in inp.changes.items()]
        written = await self.store.note(inp.workspace_id, entries, source)
        return SessionChangeAudited(version=written.version)
