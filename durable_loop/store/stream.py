"""Streamed assistant text: chunks the LLM activity writes while a reply is generated, and
the reads a caller uses to tail them. Nothing here enters workflow history.

Migration ``0003_stream_chunks`` creates the table. Rows are keyed by (session, assistant
seq, activity attempt, index); a retried attempt writes its own rows.
"""

from __future__ import annotations

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
)
from sqlalchemy.orm import Mapped, mapped_column

from durable_loop.store.database import Database, insert_ignore
from durable_loop.store.schema import Base


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
LAST_ID = select(func.max(CHUNKS.c.id)).where(CHUNKS.c.session_id == bindparam("session_id"))


@dataclass(frozen=True)
class StreamChunk:
    id: int
    seq: int
    attempt: int
    idx: int
    text: str
    done: bool


class StreamStore:
    def __init__(self, db: Database) -> None:
        self.db = db
        self._insert = insert_ignore(CHUNKS, db.engine.dialect.name)

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
        await self.db.write(lambda conn: conn.execute(self._insert, row), inline=True)

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
