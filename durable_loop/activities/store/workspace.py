"""Workspace store: versioned facts/draft/locks/ui_state with an append-only audit log.

Every write is one transaction that checks the version it read (``UPDATE ... WHERE
version = :read``): a write against a stale version is refused, never merged. Keyed writes
(tool calls, proposal settlements) return their recorded result when repeated, so activity
retries and worker crashes never apply a change twice.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

from pydantic import JsonValue
from sqlalchemy import func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from durable_loop.activities.store.engine import StoreConfig, async_engine, migrate
from durable_loop.activities.store.workspace_base import (
    AUDIT,
    WRITES,
    WS,
    AuditEntry,
    ChangeSource,
    Snapshot,
    StaleWrite,
    WriteResult,
    dumps,
    insert_ignore,
    retrying,
    snapshot_of,
)
from durable_loop.toolcalling.errors import ErrorCode
from durable_loop.toolcalling.proposals import SettleOutput
from durable_loop.workspace.patch import (
    STALE_VERSION,
    Doc,
    Op,
    WorkspaceError,
    WorkspaceLimits,
    apply_ops,
    normalize_ops,
    tokens,
)

__all__ = ["AuditEntry", "ChangeSource", "Snapshot", "WorkspaceStore", "WriteResult"]

SettledListener = Callable[[SettleOutput], Awaitable[None]]


class WorkspaceStore:
    def __init__(
        self,
        engine: AsyncEngine,
        limits: WorkspaceLimits | None = None,
        *,
        on_settled: SettledListener | None = None,
    ) -> None:
        self.engine = engine
        self.limits = limits or WorkspaceLimits()
        self.on_settled = on_settled
        """Awaited after a settlement is durably written (e.g. to notify a UI)."""

    async def close(self) -> None:
        await self.engine.dispose()

    # ------------------------------------------------------------------ reads

    async def snapshot(self, workspace_id: str) -> Snapshot:
        async with self.engine.connect() as conn:
            row = (await conn.execute(select(WS).where(WS.c.workspace_id == workspace_id))).first()
        return snapshot_of(row) if row else Snapshot(workspace_id=workspace_id)

    async def audit(self, workspace_id: str) -> list[AuditEntry]:
        query = select(AUDIT).where(AUDIT.c.workspace_id == workspace_id).order_by(AUDIT.c.id)
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query)).all()
        return [
            AuditEntry(
                **{k: v for k, v in r._mapping.items() if k not in ("id", "value_json")},
                value=json.loads(r.value_json) if r.value_json is not None else None,
            )
            for r in rows
        ]

    # ------------------------------------------------------------------ transaction parts

    async def load(self, conn: AsyncConnection, workspace_id: str) -> Snapshot:
        """Read (creating an empty workspace if absent) inside a write transaction."""
        await conn.execute(insert_ignore(conn, WS), {"workspace_id": workspace_id})
        query = select(WS).where(WS.c.workspace_id == workspace_id)
        if conn.dialect.name == "postgresql":
            query = query.with_for_update()
        return snapshot_of((await conn.execute(query)).one())

    async def save(
        self, conn: AsyncConnection, read: Snapshot, new: Snapshot, *, facts_changed: bool = False
    ) -> Snapshot:
        saved = new.model_copy(
            update={
                "version": read.version + 1,
                "facts_version": read.facts_version + (1 if facts_changed else 0),
            }
        )
        result = await conn.execute(
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

    async def record(
        self,
        conn: AsyncConnection,
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
        await conn.execute(
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

    async def _recorded(self, conn: AsyncConnection, key: str | None) -> WriteResult | None:
        if key is None:
            return None
        row = (
            await conn.execute(select(WRITES.c.result_json).where(WRITES.c.idempotency_key == key))
        ).first()
        return WriteResult.model_validate_json(row[0]) if row else None

    async def _remember(self, conn: AsyncConnection, key: str | None, result: WriteResult) -> None:
        if key is not None:
            await conn.execute(
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
        async with self.engine.begin() as conn:
            inserted = insert_ignore(conn, WS).returning(WS.c.workspace_id)
            created = (await conn.execute(inserted, row)).first() is not None
            if created:
                await self.record(
                    conn, workspace_id, 1, source, [("workspace", "create", "", None)]
                )
        return await self.snapshot(workspace_id)

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

        async def attempt() -> WriteResult:
            async with self.engine.begin() as conn:
                done = await self._recorded(conn, source.idempotency_key)
                if done is not None:
                    return done
                read = await self.load(conn, workspace_id)
                if expected_version is not None and expected_version != read.version:
                    raise WorkspaceError(
                        STALE_VERSION,
                        f"workspace is at version {read.version}, not {expected_version}; "
                        "read it again (state_get) and redo the change against the current "
                        f"state with base_version {read.version}",
                    )
                document: Doc = read.facts if target == "facts" else read.draft
                applied = apply_ops(
                    document, ops, locks=read.locks, limits=self.limits, label=target
                )
                saved = await self.save(
                    conn,
                    read,
                    read.model_copy(update={target: applied.document}),
                    facts_changed=target == "facts",
                )
                await self.record(
                    conn, workspace_id, saved.version, source, audit_entries(target, ops)
                )
                result = WriteResult(
                    workspace_id=workspace_id,
                    version=saved.version,
                    facts_version=saved.facts_version,
                    paths=applied.paths,
                )
                await self._remember(conn, source.idempotency_key, result)
                return result

        if expected_version is not None:
            try:
                return await attempt()
            except StaleWrite:
                raise WorkspaceError(
                    STALE_VERSION, "the workspace changed; read it again"
                ) from None
        return await retrying(attempt)

    async def set_lock(
        self, workspace_id: str, path: str, source: ChangeSource, *, locked: bool = True
    ) -> Snapshot:
        tokens(path)

        async def attempt() -> Snapshot:
            async with self.engine.begin() as conn:
                read = await self.load(conn, workspace_id)
                locks = [p for p in read.locks if p != path] + ([path] if locked else [])
                if sorted(locks) == sorted(read.locks):
                    return read
                saved = await self.save(conn, read, read.model_copy(update={"locks": locks}))
                op = "lock" if locked else "unlock"
                await self.record(
                    conn, workspace_id, saved.version, source, [("locks", op, path, None)]
                )
                return saved

        return await retrying(attempt)

    async def set_ui_state(
        self, workspace_id: str, ui_state: JsonValue, source: ChangeSource
    ) -> Snapshot:
        async def attempt() -> Snapshot:
            async with self.engine.begin() as conn:
                read = await self.load(conn, workspace_id)
                saved = await self.save(conn, read, read.model_copy(update={"ui_state": ui_state}))
                entry = ("ui_state", "replace", "", ui_state)
                await self.record(conn, workspace_id, saved.version, source, [entry])
                return saved

        return await retrying(attempt)


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
    """Migrate, then return a workspace store on its own async engine."""
    migrate(config.url)
    return WorkspaceStore(async_engine(config.url), limits)
