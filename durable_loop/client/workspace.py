"""A session's workspace as a person reads it: facts, draft, locks, version and the newest
audit rows, from the store, with each decided tool call's arguments read from the
transcript (:mod:`durable_loop.client.workspace_decisions` words them).

The workspace id is a session setting (``SessionSettings.workspace.workspace_id``, the
session id when unset). It is read from the start event of the session's latest run, so
neither a worker nor a running session is needed.
"""

from __future__ import annotations

from datetime import timedelta
from functools import partial

from pydantic import BaseModel, Field, JsonValue
from sqlalchemy import Connection
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from durable_loop.client.trace.fetch import require_store
from durable_loop.core import names
from durable_loop.core.approvals import tool_call_fingerprint
from durable_loop.core.canonical_json import strict_loads
from durable_loop.core.config import SessionSettings
from durable_loop.core.messages import Message, ToolCall
from durable_loop.core.outcome import preview
from durable_loop.core.workspace_patch import Doc, overlaps
from durable_loop.store.engine import async_engine
from durable_loop.store.transcript import READ_ROLE
from durable_loop.store.workspace import AuditEntry, Snapshot, WorkspaceStore

AUDIT_ROWS = 20
"""Audit rows a workspace view shows by default (the newest)."""
ARGS_CHARS = 200
"""Characters of a decided call's arguments a view shows."""
ALL_SEQS = 2**31 - 1
"""Above every seq: the column is a 32-bit INTEGER (PostgreSQL refuses a larger bound)."""


class AuditLine(AuditEntry):
    arguments: str | None = Field(
        default=None,
        description="For a decision on a tool call: the call's arguments as the model sent "
        f"them (from the transcript), on one line, at most {ARGS_CHARS} characters",
    )


class WorkspaceView(Snapshot):
    session_id: str | None = None
    exists: bool = Field(
        description="False: nothing was ever written to this workspace's facts, draft or "
        "locks (decisions and session changes may still be in the audit rows)"
    )
    audit: list[AuditLine] = Field(
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
        **snapshot.model_dump(),
        session_id=session_id,
        exists=snapshot.version > 0,
        audit=await with_call_arguments(store, audit),
    )


async def with_call_arguments(store: WorkspaceStore, rows: list[AuditEntry]) -> list[AuditLine]:
    """The rows, each decision on a tool call with the call's arguments from its session's
    transcript (the audit row keeps only the fingerprint, and the arguments of an edit)."""
    sessions = {r.session_id for r in rows if r.target == "tool" and r.call_id and r.session_id}
    calls: dict[str, list[ToolCall]] = {}
    for sid in sorted(sessions):
        calls[sid] = await store.db.read(partial(_assistant_calls, session_id=sid))
    lines = []
    for row in rows:
        found = _decided_call(row, calls.get(row.session_id or "", []))
        arguments = preview(found.arguments, ARGS_CHARS) if found is not None else None
        lines.append(AuditLine(**row.model_dump(), arguments=arguments or None))
    return lines


def _assistant_calls(conn: Connection, session_id: str) -> list[ToolCall]:
    params = {"session_id": session_id, "upto_seq": ALL_SEQS, "role": "assistant"}
    return [
        call
        for row in conn.execute(READ_ROLE, params)
        for call in Message.model_validate_json(row._mapping["message_json"]).tool_calls
    ]


def _decided_call(row: AuditEntry, calls: list[ToolCall]) -> ToolCall | None:
    """The call a tool decision is about: by id, the one whose fingerprint the decision
    names (ids may repeat across turns), else the newest with that id."""
    if row.target != "tool" or not row.call_id:
        return None
    same_id = [call for call in calls if call.id == row.call_id]
    value = row.value if isinstance(row.value, dict) else {}
    # a hold's fingerprint (patch decision-rules) also names where the call was held; the
    # arguments' own fingerprint is kept beside it
    fingerprint = value.get("arguments_fingerprint", value.get("fingerprint"))
    for call in reversed(same_id):
        if fingerprint is not None and _fingerprint(call) == fingerprint:
            return call
    return same_id[-1] if same_id else None


def _fingerprint(call: ToolCall) -> str | None:
    try:
        arguments = strict_loads(call.arguments) if call.arguments.strip() else {}
    except (ValueError, RecursionError):
        return None
    return tool_call_fingerprint(call.name, arguments) if isinstance(arguments, dict) else None


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
