"""A session's workspace as a person reads it: facts, draft, locks, version and the newest
audit rows, from the store.

The workspace id is a session setting (``SessionSettings.workspace.workspace_id``, the
session id when unset). It is read from the start event of the session's latest run, so
neither a worker nor a running session is needed.
"""

from __future__ import annotations

from datetime import timedelta

from pydantic import BaseModel, Field, JsonValue
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from durable_loop.client.trace.fetch import require_store
from durable_loop.core import names
from durable_loop.core.config import SessionSettings
from durable_loop.core.workspace_patch import Doc, overlaps
from durable_loop.store.engine import async_engine
from durable_loop.store.workspace import AuditEntry, Snapshot, WorkspaceStore

AUDIT_ROWS = 20
"""Audit rows a workspace view shows by default (the newest)."""


class WorkspaceView(Snapshot):
    session_id: str | None = None
    exists: bool = Field(description="False: nothing was ever written to this workspace")
    audit: list[AuditEntry] = Field(
        default_factory=list, description="The newest audit rows, oldest first"
    )


class DocumentRow(BaseModel):
    path: str
    value: JsonValue
    locked: bool = False


def document_rows(document: Doc, locks: list[str]) -> list[DocumentRow]:
    """One row per leaf under the document's objects (lists are one value), by JSON
    pointer, marked when a lock covers it."""
    return [
        DocumentRow(path=path, value=value, locked=any(overlaps(lock, path) for lock in locks))
        for path, value in _leaves(document, "")
    ]


def _leaves(value: JsonValue, prefix: str) -> list[tuple[str, JsonValue]]:
    if isinstance(value, dict) and (value or not prefix):
        return [
            pair
            for key, inner in value.items()
            for pair in _leaves(inner, f"{prefix}/{key.replace('~', '~0').replace('/', '~1')}")
        ]
    return [(prefix, value)]


class _StartedSession(BaseModel):
    """What the workspace view needs of a session's (or child session's) start input."""

    session_id: str
    settings: SessionSettings


async def read_workspace(
    store: WorkspaceStore,
    workspace_id: str,
    *,
    session_id: str | None = None,
    audit_rows: int = AUDIT_ROWS,
) -> WorkspaceView:
    snapshot = await store.snapshot(workspace_id)
    audit = await store.audit(workspace_id, last=audit_rows) if audit_rows > 0 else []
    return WorkspaceView(
        **snapshot.model_dump(), session_id=session_id, exists=snapshot.version > 0, audit=audit
    )


async def session_workspace_id(client: Client, session_id: str) -> str:
    """The session's workspace id; RPCError NOT_FOUND when there is no such session."""
    handle = client.get_workflow_handle(names.session_workflow_id(session_id))
    events = handle.fetch_history_events(page_size=1, rpc_timeout=timedelta(seconds=30))
    async for event in events:
        payloads = event.workflow_execution_started_event_attributes.input.payloads
        [started] = await client.data_converter.decode(payloads, [_StartedSession])
        assert isinstance(started, _StartedSession)
        return started.settings.workspace.workspace_id or session_id
    raise RPCError("the session's history has no start event", RPCStatusCode.NOT_FOUND, b"")


async def load_workspace(
    db_url: str, workspace_id: str, *, session_id: str | None = None, audit_rows: int = AUDIT_ROWS
) -> WorkspaceView:
    """Read a workspace from the store at ``db_url`` without creating or migrating anything
    (StoreMissing for a local SQLite file that is not there)."""
    require_store(db_url)
    store = WorkspaceStore(async_engine(db_url))
    try:
        return await read_workspace(
            store, workspace_id, session_id=session_id, audit_rows=audit_rows
        )
    finally:
        await store.close()
