"""Workspace store: versioned facts/draft/locks/ui_state with an append-only audit log.

Every write is one transaction that checks the version it read (``UPDATE ... WHERE
version = :read``): a write against a stale version is refused, never merged. Keyed writes
(tool calls, proposal settlements) return their recorded result when repeated, so activity
retries and worker crashes never apply a change twice.

Each read or write is one function of a SQLAlchemy ``Connection`` run by
``store.database.Database``; the calls on one workspace or proposal are ``inline`` (on
SQLite they run on the caller's thread), audit logs and proposal lists are not.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

from pydantic import JsonValue
from sqlalchemy import Connection, bindparam, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from durable_loop.core.errors import ErrorCode
from durable_loop.core.proposals import SettleOutput
from durable_loop.core.workspace_patch import (
    Doc,
    Op,
    WorkspaceError,
    WorkspaceLimits,
    apply_ops,
    normalize_ops,
    tokens,
)
from durable_loop.store.database import Database, insert_ignore
from durable_loop.store.engine import StoreConfig, async_engine, migrate
from durable_loop.store.workspace_base import (
    AUDIT,
    WRITES,
    WS,
    AuditEntry,
    ChangeSource,
    Snapshot,
    StaleWrite,
    WriteResult,
    dumps,
    retrying,
    snapshot_of,
)

__all__ = ["AuditEntry", "ChangeSource", "Snapshot", "WorkspaceStore", "WriteResult"]

SettledListener = Callable[[SettleOutput], Awaitable[None]]
SNAPSHOT = select(WS).where(WS.c.workspace_id == bindparam("workspace_id"))
AUDIT_LOG = (
    select(AUDIT).where(AUDIT.c.workspace_id == bindparam("workspace_id")).order_by(AUDIT.c.id)
)
AUDIT_RECENT = (
    select(AUDIT)
    .where(AUDIT.c.workspace_id == bindparam("workspace_id"))
    .order_by(AUDIT.c.id.desc())
    .limit(bindparam("limit"))
)
RECORDED = select(WRITES.c.result_json).where(WRITES.c.idempotency_key == bindparam("key"))


class WorkspaceStore:
    def __init__(
        self,
        db: Database | AsyncEngine,
        limits: WorkspaceLimits | None = None,
        *,
        on_settled: SettledListener | None = None,
    ) -> None:
        """``db``: share a ``Database`` (e.g. the transcript store's) or give an engine."""
        self.db = db if isinstance(db, Database) else Database(db)
        self.limits = limits or WorkspaceLimits()
        self.on_settled = on_settled
        """Awaited after a settlement is durably written (e.g. to notify a UI)."""

    @property
    def engine(self) -> AsyncEngine:
        return self.db.engine

    async def close(self) -> None:
        await self.db.dispose()

    # ------------------------------------------------------------------ reads

    async def snapshot(self, workspace_id: str) -> Snapshot:
        return await self.db.read(lambda conn: read_snapshot(conn, workspace_id), inline=True)

    async def audit(self, workspace_id: str, *, last: int | None = None) -> list[AuditEntry]:
        """The audit log, oldest first; ``last``: only the newest ``last`` rows."""

        def work(conn: Connection) -> list[AuditEntry]:
            if last is None:
                rows = conn.execute(AUDIT_LOG, {"workspace_id": workspace_id}).all()
            else:
                params = {"workspace_id": workspace_id, "limit": last}
                rows = list(reversed(conn.execute(AUDIT_RECENT, params).all()))
            return [
                AuditEntry(
                    **{k: v for k, v in r._mapping.items() if k not in ("id", "value_json")},
                    value=json.loads(r.value_json) if r.value_json is not None else None,
                )
                for r in rows
            ]

        return await self.db.read(work)

    # ------------------------------------------------------------------ transaction parts

    def load(self, conn: Connection, workspace_id: str) -> Snapshot:
        """Read (creating an empty workspace if absent) inside a write transaction."""
        conn.execute(insert_ignore(WS, conn.dialect.name), {"workspace_id": workspace_id})
        query = SNAPSHOT.with_for_update() if conn.dialect.name == "postgresql" else SNAPSHOT
        return snapshot_of(conn.execute(query, {"workspace_id": workspace_id}).one())

    def save(
        self, conn: Connection, read: Snapshot, new: Snapshot, *, facts_changed: bool = False
    ) -> Snapshot:
        saved = new.model_copy(
            update={
                "version": read.version + 1,
                "facts_version": read.facts_version + (1 if facts_changed else 0),
            }
        )
        result = conn.execute(
            update(WS)
            .where(WS.c.workspace_id == read.workspace_id, WS.c.version == read.version)
            .values(
                facts_json=dumps(saved.facts),
                draft_json=dumps(saved.draft),
                locks_json=dumps(saved.locks),  # type: ignore[arg-type]
                ui_state_json=None if saved.ui_state is None else dumps(saved.ui_state),
                version=saved.version,
                facts_version=saved.facts_version,
                updated_at=func.now(),
            )
        )
        if result.rowcount != 1:
            raise StaleWrite(read.workspace_id)
        return saved

    def record(
        self,
        conn: Connection,
        workspace_id: str,
        version: int,
        source: ChangeSource,
        entries: list[tuple[str, str, str, JsonValue]],
    ) -> None:
        """Append audit rows: (target, op, path, value) each. Every row names its actor."""
        if not entries:
            return
        if not source.actor.strip():
            raise WorkspaceError(ErrorCode.INVALID_ARGS, "every change needs an actor")
        if "\x00" in source.actor + (source.comment or ""):
            raise WorkspaceError(
                ErrorCode.INVALID_ARGS, "actor or comment contains a NUL character"
            )
        conn.execute(
            insert(AUDIT),
            [
                {
                    "workspace_id": workspace_id,
                    "version": version,
                    "target": target,
                    "op": op,
                    "path": path,
                    "value_json": None if value is None else dumps(value),
                    "actor": source.actor,
                    "actor_kind": source.actor_kind,
                    "session_id": source.session_id,
                    "turn": source.turn,
                    "call_id": source.call_id,
                    "proposal_id": source.proposal_id,
                    "comment": source.comment,
                }
                for target, op, path, value in entries
            ],
        )

    def _recorded(self, conn: Connection, key: str | None) -> WriteResult | None:
        if key is None:
            return None
        row = conn.execute(RECORDED, {"key": key}).first()
        return WriteResult.model_validate_json(row[0]) if row else None

    def _remember(self, conn: Connection, key: str | None, result: WriteResult) -> None:
        if key is not None:
            conn.execute(
                insert(WRITES),
                [
                    {
                        "idempotency_key": key,
                        "workspace_id": result.workspace_id,
                        "result_json": result.model_dump_json(),
                    }
                ],
            )

    # ------------------------------------------------------------------ writes

    async def create(
        self,
        workspace_id: str,
        *,
        facts: Doc | None = None,
        draft: Doc | None = None,
        locks: list[str] | None = None,
        ui_state: JsonValue = None,
        source: ChangeSource | None = None,
    ) -> Snapshot:
        """Create a workspace with initial content; an existing one is returned unchanged."""
        source = source or ChangeSource(actor="app")
        for lock in locks or []:
            tokens(lock)
        row = {
            "workspace_id": workspace_id,
            "facts_json": dumps(facts or {}),
            "draft_json": dumps(draft or {}),
            "locks_json": dumps(list(locks or [])),
            "ui_state_json": None if ui_state is None else dumps(ui_state),
            "version": 1,
        }

        def work(conn: Connection) -> Snapshot:
            inserted = insert_ignore(WS, conn.dialect.name).returning(WS.c.workspace_id)
            if conn.execute(inserted, row).first() is not None:
                self.record(conn, workspace_id, 1, source, [("workspace", "create", "", None)])
            return read_snapshot(conn, workspace_id)

        return await self.db.write(work, inline=True)

    async def apply(
        self,
        workspace_id: str,
        target: str,
        raw_ops: object,
        source: ChangeSource,
        *,
        expected_version: int | None = None,
    ) -> WriteResult:
        """Apply a change set to ``draft`` or ``facts`` all-or-nothing (locks apply to both).

        ``facts`` is written this way only by trusted callers (a person's edit through the
        application, or a confirmed proposal), never by a model-facing tool.
        """
        if target not in ("draft", "facts"):
            raise ValueError(f"target must be 'draft' or 'facts', not {target!r}")
        ops = normalize_ops(raw_ops, self.limits)

        def attempt(conn: Connection) -> WriteResult:
            done = self._recorded(conn, source.idempotency_key)
            if done is not None:
                return done
            read = self.load(conn, workspace_id)
            if expected_version is not None and expected_version != read.version:
                raise WorkspaceError(
                    ErrorCode.STALE_VERSION,
                    f"workspace is at version {read.version}, not {expected_version}; "
                    "read it again (state_get) and redo the change against the current "
                    f"state with base_version {read.version}",
                )
            document: Doc = read.facts if target == "facts" else read.draft
            applied = apply_ops(document, ops, locks=read.locks, limits=self.limits, label=target)
            saved = self.save(
                conn,
                read,
                read.model_copy(update={target: applied.document}),
                facts_changed=target == "facts",
            )
            self.record(conn, workspace_id, saved.version, source, audit_entries(target, ops))
            result = WriteResult(
                workspace_id=workspace_id,
                version=saved.version,
                facts_version=saved.facts_version,
                paths=applied.paths,
            )
            self._remember(conn, source.idempotency_key, result)
            return result

        if expected_version is not None:
            try:
                return await self.db.write(attempt, inline=True)
            except StaleWrite:
                raise WorkspaceError(
                    ErrorCode.STALE_VERSION, "the workspace changed; read it again"
                ) from None
        return await retrying(lambda: self.db.write(attempt, inline=True))

    async def note(
        self,
        workspace_id: str,
        entries: list[tuple[str, str, str, JsonValue]],
        source: ChangeSource,
    ) -> WriteResult:
        """Append audit rows about something outside the documents (a session's budget) at
        the current version, changing nothing; once per ``source.idempotency_key``."""

        def attempt(conn: Connection) -> WriteResult:
            done = self._recorded(conn, source.idempotency_key)
            if done is not None:
                return done
            read = self.load(conn, workspace_id)
            self.record(conn, workspace_id, read.version, source, entries)
            result = WriteResult(
                workspace_id=workspace_id, version=read.version, facts_version=read.facts_version
            )
            self._remember(conn, source.idempotency_key, result)
            return result

        return await self.db.write(attempt, inline=True)

    async def set_lock(
        self, workspace_id: str, path: str, source: ChangeSource, *, locked: bool = True
    ) -> Snapshot:
        tokens(path)

        def attempt(conn: Connection) -> Snapshot:
            read = self.load(conn, workspace_id)
            locks = [p for p in read.locks if p != path] + ([path] if locked else [])
            if sorted(locks) == sorted(read.locks):
                return read
            saved = self.save(conn, read, read.model_copy(update={"locks": locks}))
            op = "lock" if locked else "unlock"
            self.record(conn, workspace_id, saved.version, source, [("locks", op, path, None)])
            return saved

        return await retrying(lambda: self.db.write(attempt, inline=True))

    async def set_ui_state(
        self, workspace_id: str, ui_state: JsonValue, source: ChangeSource
    ) -> Snapshot:
        def attempt(conn: Connection) -> Snapshot:
            read = self.load(conn, workspace_id)
            saved = self.save(conn, read, read.model_copy(update={"ui_state": ui_state}))
            entry = ("ui_state", "replace", "", ui_state)
            self.record(conn, workspace_id, saved.version, source, [entry])
            return saved

        return await retrying(lambda: self.db.write(attempt, inline=True))


def read_snapshot(conn: Connection, workspace_id: str) -> Snapshot:
    row = conn.execute(SNAPSHOT, {"workspace_id": workspace_id}).first()
    return snapshot_of(row) if row else Snapshot(workspace_id=workspace_id)


def audit_entries(target: str, ops: list[Op]) -> list[tuple[str, str, str, JsonValue]]:
    entries: list[tuple[str, str, str, JsonValue]] = []
    for op in ops:
        value: JsonValue = op.get("value")
        if "from" in op:
            value = {"from": op["from"]}
        entries.append((target, str(op["op"]), str(op["path"]), value))
    return entries


def open_workspace_store(
    config: StoreConfig, limits: WorkspaceLimits | None = None
) -> WorkspaceStore:
    """Migrate, then return a workspace store on its own connections."""
    migrate(config.url)
    return WorkspaceStore(async_engine(config.url), limits)
