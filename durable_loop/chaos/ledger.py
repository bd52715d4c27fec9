"""The chaos tools' own record of what they did, in the store's database.

Every invocation is a row (a retry after a crash is a second row with the same idempotency
key); every side effect is a row keyed by the idempotency key, written insert-if-absent,
so a re-invocation finds the effect already applied. A duplicate is one call (session,
LLM turn, call id) whose effect was applied under more than one key: the key was not
stable across attempts, workers or replays.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from sqlalchemy import (
    Column,
    Engine,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    create_engine,
    event,
    func,
    insert,
    select,
)
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import make_url

from durable_loop.core.registry import ToolContext

SIDE_EFFECTING = ("transfer", "notify", "notify_checked")
"""Tools whose invocations count in :meth:`Ledger.counts` (the others have no effect)."""
METADATA = MetaData()
INVOCATIONS = Table(
    "chaos_invocations",
    METADATA,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("idempotency_key", String(300), index=True, nullable=False),
    Column("session_id", String(200), index=True, nullable=False),
    Column("call_id", String(200), nullable=False),
    Column("turn", Integer, nullable=False),
    Column("tool", String(64), nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("pid", Integer, nullable=False),
    Column("at", Float, nullable=False),
)
EFFECTS = Table(
    "chaos_effects",
    METADATA,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("idempotency_key", String(300), unique=True, nullable=False),
    Column("session_id", String(200), index=True, nullable=False),
    Column("call_id", String(200), nullable=False),
    Column("turn", Integer, nullable=False),
    Column("tool", String(64), nullable=False),
    Column("amount", Integer, nullable=False),
    Column("pid", Integer, nullable=False),
    Column("at", Float, nullable=False),
)


@dataclass(frozen=True)
class LedgerCounts:
    invocations: int
    keys: int
    effects: int
    duplicates: int


def sync_engine(url: str) -> Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() == "postgresql":
        return create_engine(parsed.set(drivername="postgresql+psycopg"))
    engine = create_engine(parsed.set(drivername="sqlite"), connect_args={"timeout": 30})

    def tune(dbapi_connection: object, _record: object) -> None:
        cursor = dbapi_connection.cursor()  # type: ignore[attr-defined]
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.close()

    event.listen(engine, "connect", tune)
    return engine


class Ledger:
    """Synchronous on purpose: chaos tools are plain functions run in a worker thread."""

    def __init__(self, url: str) -> None:
        self.engine = sync_engine(url)
        METADATA.create_all(self.engine)

    def close(self) -> None:
        self.engine.dispose()

    def invoked(self, ctx: ToolContext, tool: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                insert(INVOCATIONS).values(
                    idempotency_key=ctx.idempotency_key,
                    session_id=ctx.session_id,
                    call_id=ctx.call_id,
                    turn=ctx.turn,
                    tool=tool,
                    attempt=ctx.attempt,
                    pid=os.getpid(),
                    at=time.time(),
                )
            )

    def apply_once(self, ctx: ToolContext, tool: str, amount: int) -> bool:
        """Apply the side effect unless this key already did; True if applied now."""
        values = {
            "idempotency_key": ctx.idempotency_key,
            "session_id": ctx.session_id,
            "call_id": ctx.call_id,
            "turn": ctx.turn,
            "tool": tool,
            "amount": amount,
            "pid": os.getpid(),
            "at": time.time(),
        }
        dialect = self.engine.dialect.name
        stmt = (pg_insert if dialect == "postgresql" else sqlite_insert)(EFFECTS).values(**values)
        with self.engine.begin() as conn:
            result = conn.execute(stmt.on_conflict_do_nothing(index_elements=["idempotency_key"]))
        return bool(result.rowcount)

    def apply_each(self, ctx: ToolContext, tool: str) -> None:
        """Apply the side effect of a tool that cannot take a key: every run of its body
        applies it again (two runs of one call are a duplicate)."""
        with self.engine.begin() as conn:
            conn.execute(
                insert(EFFECTS).values(
                    idempotency_key=f"{ctx.idempotency_key}#attempt-{ctx.attempt}",
                    session_id=ctx.session_id,
                    call_id=ctx.call_id,
                    turn=ctx.turn,
                    tool=tool,
                    amount=0,
                    pid=os.getpid(),
                    at=time.time(),
                )
            )

    def applied(self, ctx: ToolContext, tool: str) -> bool:
        """Whether any run of this call (session, call id) applied ``tool``'s effect."""
        query = (
            select(func.count())
            .select_from(EFFECTS)
            .where(
                EFFECTS.c.session_id == ctx.session_id,
                EFFECTS.c.call_id == ctx.call_id,
                EFFECTS.c.tool == tool,
            )
        )
        with self.engine.connect() as conn:
            return bool(conn.execute(query).scalar_one())

    def counts(self, session_ids: list[str] | None = None) -> LedgerCounts:
        inv = select(func.count(), func.count(func.distinct(INVOCATIONS.c.idempotency_key))).where(
            INVOCATIONS.c.tool.in_(SIDE_EFFECTING)
        )
        eff = select(func.count()).select_from(EFFECTS)
        per_call = select(func.count().label("n")).select_from(EFFECTS)
        if session_ids is not None:
            inv = inv.where(INVOCATIONS.c.session_id.in_(session_ids))
            eff = eff.where(EFFECTS.c.session_id.in_(session_ids))
            per_call = per_call.where(EFFECTS.c.session_id.in_(session_ids))
        per_call = per_call.group_by(EFFECTS.c.session_id, EFFECTS.c.turn, EFFECTS.c.call_id)
        with self.engine.connect() as conn:
            invocations, keys = conn.execute(inv).one()
            effects = conn.execute(eff).scalar_one()
            duplicates = sum(max(0, n - 1) for (n,) in conn.execute(per_call))
        return LedgerCounts(
            invocations=invocations, keys=keys, effects=effects, duplicates=duplicates
        )

    def invocations(self, session_id: str, tool: str | None = None) -> list[int]:
        """Attempt numbers of the session's invocations (of ``tool``), oldest first."""
        query = select(INVOCATIONS.c.attempt).where(INVOCATIONS.c.session_id == session_id)
        if tool is not None:
            query = query.where(INVOCATIONS.c.tool == tool)
        with self.engine.connect() as conn:
            return [a for (a,) in conn.execute(query.order_by(INVOCATIONS.c.id))]

    def effects(self, session_id: str) -> int:
        query = select(func.count()).select_from(EFFECTS).where(EFFECTS.c.session_id == session_id)
        with self.engine.connect() as conn:
            return int(conn.execute(query).scalar_one())
