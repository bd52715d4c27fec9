"""Building blocks of the workspace store: result models, the change source recorded on
every audit row, and the retry loop for read-check-write transactions."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar, cast

from pydantic import BaseModel, Field, JsonValue
from sqlalchemy import Table
from sqlalchemy.exc import IntegrityError, OperationalError

from durable_loop.core.canonical_json import canonical_dumps
from durable_loop.core.errors import ErrorCode
from durable_loop.core.workspace_patch import Doc, WorkspaceError
from durable_loop.store.database import is_busy
from durable_loop.store.workspace_schema import AuditRow, WorkspaceRow, WriteRow

T = TypeVar("T")
WS = cast(Table, WorkspaceRow.__table__)
AUDIT = cast(Table, AuditRow.__table__)
WRITES = cast(Table, WriteRow.__table__)
ATTEMPTS = 8


class Snapshot(BaseModel):
    workspace_id: str
    facts: Doc = Field(default_factory=dict)
    draft: Doc = Field(default_factory=dict)
    locks: list[str] = Field(default_factory=list)
    ui_state: JsonValue = None
    version: int = 0
    facts_version: int = 0


class WriteResult(BaseModel):
    workspace_id: str
    version: int
    facts_version: int
    paths: list[str] = Field(default_factory=list)


class AuditEntry(BaseModel):
    workspace_id: str
    version: int
    target: str
    op: str
    path: str
    value: JsonValue = None
    actor: str
    actor_kind: str
    session_id: str | None = None
    turn: int | None = None
    call_id: str | None = None
    proposal_id: str | None = None
    comment: str | None = None
    created_at: datetime | None = None


@dataclass(frozen=True)
class ChangeSource:
    """Who or what makes a change, and where: recorded on every audit row."""

    actor: str
    actor_kind: str = "app"
    session_id: str | None = None
    turn: int | None = None
    call_id: str | None = None
    proposal_id: str | None = None
    comment: str | None = None
    idempotency_key: str | None = None


class StaleWrite(WorkspaceError):
    """Another writer changed ``what`` (a workspace or proposal id, the message) between
    our read and our write; :func:`retrying` runs the transaction again."""

    def __init__(self, what: str) -> None:
        super().__init__(ErrorCode.STALE_VERSION, what)


def dumps(value: JsonValue) -> str:
    return canonical_dumps(value)


def snapshot_of(row: object) -> Snapshot:
    m = row._mapping  # type: ignore[attr-defined]
    return Snapshot(
        workspace_id=m["workspace_id"],
        facts=json.loads(m["facts_json"]),
        draft=json.loads(m["draft_json"]),
        locks=json.loads(m["locks_json"]),
        ui_state=json.loads(m["ui_state_json"]) if m["ui_state_json"] is not None else None,
        version=m["version"],
        facts_version=m["facts_version"],
    )


async def retrying(attempt: Callable[[], Awaitable[T]]) -> T:
    """Re-run a read-check-write transaction a few times on write races (never merges)."""
    for n in range(ATTEMPTS):
        try:
            return await attempt()
        except (StaleWrite, IntegrityError) as err:
            last: Exception = err
        except OperationalError as err:  # SQLite: another writer holds the database
            if not is_busy(err):
                raise
            last = err
        await asyncio.sleep(0.01 * (n + 1))
    raise WorkspaceError(
        ErrorCode.STALE_VERSION, f"the workspace kept changing under this write: {last}"
    )
