"""Streamed assistant text: chunks the LLM activity writes while a reply is generated, and
the reads a caller uses to tail them. Nothing here enters workflow history.

Migration ``0003_stream_chunks`` creates the table. Rows are keyed by (session, assistant
seq, activity attempt, index); a retried attempt writes its own rows.

``wait_for`` is how a caller tails a session: it returns as soon as a chunk is there, woken
by the writer (``stream_wake``: PostgreSQL ``NOTIFY``, or in-process on SQLite) and
otherwise polling every ``poll_s``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime
from typing import cast

from sqlalchemy import (
    Boolean,
    Connection,
    DateTime,
    Integer,
    String,
    Table,
    Text,
    bindparam,
    func,
    select,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from durable_loop.store.database import Database, insert_ignore
from durable_loop.store.schema import Base
from durable_loop.store.stream_wake import NOTIFY, PgListener, Waiters, local_waiters


class StreamChunkRow(Base):
    __tablename__ = "stream_chunks"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    session_id: Mapped[str] = mapped_column(String(200))
    seq: Mapped[int] = mapped_column(Integer)
    attempt: Mapped[int] = mapped_column(Integer)
    idx: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    done: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


CHUNKS = cast(Table, StreamChunkRow.__table__)
READ = (
    select(CHUNKS)
    .where(CHUNKS.c.session_id == bindparam("session_id"), CHUNKS.c.id > bindparam("after_id"))
    .order_by(CHUNKS.c.id)
    .limit(bindparam("limit"))
)
ANY_AFTER = (
    select(CHUNKS.c.id)
    .where(CHUNKS.c.session_id == bindparam("session_id"), CHUNKS.c.id > bindparam("after_id"))
    .limit(1)
)
LAST_ID = select(func.max(CHUNKS.c.id)).where(CHUNKS.c.session_id == bindparam("session_id"))


@dataclass(frozen=True)
class StreamChunk:
    id: int
    seq: int
    attempt: int
    idx: int
    text: str
    done: bool


SQLITE_POLL_S = 0.01
"""SQLite readers poll this often for writers in other processes (an indexed probe)."""
PG_POLL_S = 0.5
"""PostgreSQL readers are woken by ``NOTIFY``; this poll only covers a lost notification."""


ASYNC_COMMIT = "SET LOCAL synchronous_commit TO OFF"
"""PostgreSQL: a chunk's commit (and its NOTIFY) does not wait for the WAL flush. Chunks are
a display channel: a server crash may lose the last few, the transcript keeps the reply."""


class StreamStore:
    """``wake=False``: readers only poll (the baseline ``bench/stream_latency.py`` measures)."""

    def __init__(self, db: Database, *, poll_s: float | None = None, wake: bool = True) -> None:
        self.db = db
        dialect = db.engine.dialect.name
        self._insert = insert_ignore(CHUNKS, dialect)
        self._notify = text(NOTIFY) if wake and dialect == "postgresql" else None
        self._async_commit = text(ASYNC_COMMIT) if dialect == "postgresql" else None
        self.poll_s = poll_s or (PG_POLL_S if self._notify is not None else SQLITE_POLL_S)
        self.wakes = 0
        """Waits that ended because a writer woke the reader."""
        self.polls = 0
        """Waits that ended on the poll interval (nothing woke the reader)."""
        self._waiters: Waiters | None = None
        self._listener: PgListener | None = None
        if wake and self._notify is not None:
            self._waiters = Waiters()
            self._listener = PgListener(db.engine.url, self._waiters)
            db.closers.append(self._listener.close)
        elif wake:
            self._waiters = local_waiters(str(db.engine.url.database))

    async def append(
        self, session_id: str, seq: int, attempt: int, idx: int, text: str, *, done: bool = False
    ) -> None:
        row = {
            "session_id": session_id,
            "seq": seq,
            "attempt": attempt,
            "idx": idx,
            "text": text,
            "done": done,
        }
        notify, async_commit = self._notify, self._async_commit

        def work(conn: Connection) -> None:
            if async_commit is not None:
                conn.execute(async_commit)
            conn.execute(self._insert, row)
            if notify is not None:
                conn.execute(notify, {"session_id": session_id})

        await self.db.write(work, inline=True)
        if notify is None and self._waiters is not None:
            self._waiters.wake(session_id)

    async def read(
        self, session_id: str, *, after_id: int = 0, limit: int = 500
    ) -> list[StreamChunk]:
        params = {"session_id": session_id, "after_id": after_id, "limit": limit}

        def work(conn: Connection) -> list[StreamChunk]:
            return [
                StreamChunk(
                    id=r.id, seq=r.seq, attempt=r.attempt, idx=r.idx, text=r.text, done=bool(r.done)
                )
                for r in conn.execute(READ, params)
            ]

        return await self.db.read(work)

    async def last_id(self, session_id: str) -> int:
        params = {"session_id": session_id}
        value = await self.db.read(lambda conn: conn.execute(LAST_ID, params).scalar(), inline=True)
        return int(value or 0)

    async def wait_for(
        self,
        session_id: str,
        after_id: int = 0,
        timeout: float = 30.0,
        *,
        limit: int = 500,
        poll_s: float | None = None,
    ) -> list[StreamChunk]:
        """The chunks after ``after_id``, as soon as there are any; [] after ``timeout``.
        ``poll_s``: look this often when nothing wakes the reader (default: the store's)."""
        poll_s = poll_s or self.poll_s
        if self._listener is not None:
            await self._listener.ensure_started(poll_s)
        ticket = self._waiters.ticket(session_id) if self._waiters is not None else None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        try:
            while True:
                if await self._any_after(session_id, after_id):
                    return await self.read(session_id, after_id=after_id, limit=limit)
                left = deadline - loop.time()
                if left <= 0:
                    return []
                pause = min(poll_s, left)
                if ticket is not None and await ticket.wait(pause):
                    self.wakes += 1
                    continue
                if ticket is None:
                    await asyncio.sleep(pause)
                self.polls += 1
        finally:
            if ticket is not None:
                ticket.close()

    def readers(self, session_id: str) -> int:
        """Readers of this session waiting in ``wait_for`` to be woken right now."""
        return self._waiters.count(session_id) if self._waiters is not None else 0

    async def _any_after(self, session_id: str, after_id: int) -> bool:
        params = {"session_id": session_id, "after_id": after_id}
        found = await self.db.read(
            lambda conn: conn.execute(ANY_AFTER, params).first(), inline=True
        )
        return found is not None
