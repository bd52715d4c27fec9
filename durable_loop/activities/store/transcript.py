"""Append-only transcript access: insert-if-absent writes make every activity retry safe."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime

from pydantic import JsonValue
from pydantic_core import PydanticSerializationError
from sqlalchemy import func, insert, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncEngine

from durable_loop.activities.store.schema import TranscriptRow
from durable_loop.toolcalling.canonical_json import scrub_surrogates
from durable_loop.toolcalling.messages import Message


@dataclass(frozen=True)
class StoredMessage:
    seq: int
    message: Message
    meta: dict[str, JsonValue] = field(default_factory=dict)
    created_at: datetime | None = None


class TranscriptStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self._dialect = engine.dialect.name

    async def close(self) -> None:
        await self.engine.dispose()

    def _insert(self):  # type: ignore[no-untyped-def]
        if self._dialect == "sqlite":
            return sqlite_insert(TranscriptRow).on_conflict_do_nothing()
        if self._dialect == "postgresql":
            return pg_insert(TranscriptRow).on_conflict_do_nothing()
        return insert(TranscriptRow)

    async def append(
        self, session_id: str, items: list[tuple[int, Message, dict[str, JsonValue]]]
    ) -> None:
        """Write messages at their seqs; a seq that already holds a message keeps it."""
        if not items:
            return
        rows = [_row(session_id, seq, message, meta) for seq, message, meta in items]
        async with self.engine.begin() as conn:
            await conn.execute(self._insert(), rows)

    async def put(
        self, session_id: str, seq: int, message: Message, meta: dict[str, JsonValue]
    ) -> StoredMessage:
        """Write one message at ``seq`` unless the seq already holds one, and return what the
        store holds there: one round trip when the write wins (``RETURNING``), a read when an
        earlier attempt of the same activity got there first."""
        row = _row(session_id, seq, message, meta)
        if self._dialect in ("sqlite", "postgresql"):
            async with self.engine.begin() as conn:
                inserted = (
                    await conn.execute(self._insert().returning(*TranscriptRow.__table__.c), row)
                ).first()
            if inserted is not None:
                return _to_stored(inserted)
        else:
            await self.append(session_id, [(seq, message, meta)])
        stored = await self.get(session_id, seq)
        if stored is None:
            raise LookupError(f"message {seq} of session {session_id!r} vanished after a write")
        return stored

    async def get(self, session_id: str, seq: int) -> StoredMessage | None:
        async with self.engine.connect() as conn:
            row = (
                await conn.execute(
                    select(TranscriptRow.__table__).where(
                        TranscriptRow.session_id == session_id, TranscriptRow.seq == seq
                    )
                )
            ).first()
        return _to_stored(row) if row else None

    async def get_many(self, session_id: str, seqs: list[int]) -> dict[int, StoredMessage]:
        """The messages at ``seqs`` that exist, by seq, in one query."""
        async with self.engine.connect() as conn:
            rows = (
                await conn.execute(
                    select(TranscriptRow.__table__).where(
                        TranscriptRow.session_id == session_id, TranscriptRow.seq.in_(seqs)
                    )
                )
            ).all()
        return {stored.seq: stored for stored in map(_to_stored, rows)}

    async def read(
        self, session_id: str, upto_seq: int | None = None, from_seq: int = 0
    ) -> list[StoredMessage]:
        query = select(TranscriptRow.__table__).where(
            TranscriptRow.session_id == session_id, TranscriptRow.seq >= from_seq
        )
        if upto_seq is not None:
            query = query.where(TranscriptRow.seq < upto_seq)
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query.order_by(TranscriptRow.seq))).all()
        return [_to_stored(r) for r in rows]

    async def read_newest(self, session_id: str, upto_seq: int, limit: int) -> list[StoredMessage]:
        """The ``limit`` newest messages with seq < ``upto_seq``, newest first."""
        query = (
            select(TranscriptRow.__table__)
            .where(TranscriptRow.session_id == session_id, TranscriptRow.seq < upto_seq)
            .order_by(TranscriptRow.seq.desc())
            .limit(limit)
        )
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query)).all()
        return [_to_stored(r) for r in rows]

    async def read_role(self, session_id: str, role: str, upto_seq: int) -> list[StoredMessage]:
        """Messages of one role with seq < ``upto_seq``, oldest first."""
        query = select(TranscriptRow.__table__).where(
            TranscriptRow.session_id == session_id,
            TranscriptRow.seq < upto_seq,
            TranscriptRow.role == role,
        )
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query.order_by(TranscriptRow.seq))).all()
        return [_to_stored(r) for r in rows]

    async def count(self, session_id: str, upto_seq: int) -> int:
        query = select(func.count()).where(
            TranscriptRow.session_id == session_id, TranscriptRow.seq < upto_seq
        )
        async with self.engine.connect() as conn:
            return int((await conn.execute(query)).scalar_one())


def message_json(message: Message) -> str:
    """The message as JSON; lone surrogates (unencodable as UTF-8) become U+FFFD."""
    try:
        return message.model_dump_json(exclude_defaults=True)
    except PydanticSerializationError:
        clean = scrub_surrogates(message.model_dump(exclude_defaults=True))
        return Message.model_validate(clean).model_dump_json(exclude_defaults=True)


def _row(
    session_id: str, seq: int, message: Message, meta: dict[str, JsonValue]
) -> dict[str, object]:
    return {
        "session_id": session_id,
        "seq": seq,
        "role": message.role,
        "message_json": message_json(message),
        "meta_json": json.dumps(scrub_surrogates(meta), separators=(",", ":")),
    }


def _to_stored(row: object) -> StoredMessage:
    mapping = row._mapping  # type: ignore[attr-defined]
    return StoredMessage(
        seq=mapping["seq"],
        message=Message.model_validate_json(mapping["message_json"]),
        meta=json.loads(mapping["meta_json"] or "{}"),
        created_at=mapping["created_at"],
    )
