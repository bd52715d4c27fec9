"""Streamed assistant text: chunks the LLM activity writes while a reply is generated, and
the reads a caller uses to tail them. Nothing here enters workflow history.

Migration ``0003_stream_chunks`` creates the table. Rows are keyed by (session, assistant
seq, activity attempt, index); a retried attempt writes its own rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Boolean, DateTime, Integer, String, Text, func, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.orm import Mapped, mapped_column

from durable_loop.activities.store.schema import Base


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


@dataclass(frozen=True)
class StreamChunk:
    id: int
    seq: int
    attempt: int
    idx: int
    text: str
    done: bool


class StreamStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

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
        dialect = self.engine.dialect.name
        insert = pg_insert if dialect == "postgresql" else sqlite_insert
        statement = insert(StreamChunkRow).values(row).on_conflict_do_nothing()
        async with self.engine.begin() as conn:
            await conn.execute(statement)

    async def read(
        self, session_id: str, *, after_id: int = 0, limit: int = 500
    ) -> list[StreamChunk]:
        query = (
            select(StreamChunkRow.__table__)
            .where(StreamChunkRow.session_id == session_id, StreamChunkRow.id > after_id)
            .order_by(StreamChunkRow.id)
            .limit(limit)
        )
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query)).all()
        return [
            StreamChunk(
                id=r.id, seq=r.seq, attempt=r.attempt, idx=r.idx, text=r.text, done=bool(r.done)
            )
            for r in rows
        ]

    async def last_id(self, session_id: str) -> int:
        query = select(func.max(StreamChunkRow.id)).where(StreamChunkRow.session_id == session_id)
        async with self.engine.connect() as conn:
            value = (await conn.execute(query)).scalar()
        return int(value or 0)
