"""Append-only transcript access: insert-if-absent writes make every activity retry safe."""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, cast

from pydantic import JsonValue
from pydantic_core import PydanticSerializationError
from sqlalchemy import Connection, Select, Table, bindparam, func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from durable_loop.core.canonical_json import scrub_surrogates
from durable_loop.core.messages import Message, StoredMessage
from durable_loop.core.reply_meta import RowMeta
from durable_loop.store.database import Database, insert_ignore
from durable_loop.store.schema import TranscriptRow

TRANSCRIPT = cast(Table, TranscriptRow.__table__)

Meta = RowMeta | dict[str, JsonValue]
"""What a row keeps beside its message: a typed meta (:mod:`durable_loop.core.reply_meta`)
or any JSON object."""


_SESSION = TRANSCRIPT.c.session_id == bindparam("session_id")
_ROWS = select(TRANSCRIPT).where(_SESSION)
GET = _ROWS.where(TRANSCRIPT.c.seq == bindparam("seq"))
GET_MANY = _ROWS.where(TRANSCRIPT.c.seq.in_(bindparam("seqs", expanding=True)))
READ_FROM = _ROWS.where(TRANSCRIPT.c.seq >= bindparam("from_seq")).order_by(TRANSCRIPT.c.seq)
READ_RANGE = READ_FROM.where(TRANSCRIPT.c.seq < bindparam("upto_seq"))
READ_NEWEST = (
    _ROWS.where(TRANSCRIPT.c.seq < bindparam("upto_seq"))
    .order_by(TRANSCRIPT.c.seq.desc())
    .limit(bindparam("limit"))
)
READ_ROLE = (
    _ROWS.where(TRANSCRIPT.c.seq < bindparam("upto_seq"), TRANSCRIPT.c.role == bindparam("role"))
).order_by(TRANSCRIPT.c.seq)
COUNT = select(func.count()).where(_SESSION, TRANSCRIPT.c.seq < bindparam("upto_seq"))
"""Statements built once: building one per call (column comparisons, ``select``) cost as
much CPU as running it on SQLite."""


INLINE_ROWS = 32
"""Calls on at most this many rows run on the caller's thread (``Database``)."""
PREFIX_CACHE_SESSIONS = 256
PREFIX_CACHE_MESSAGES = 20_000


class TranscriptStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self.db = Database(engine)
        self._prefixes: OrderedDict[str, tuple[int, list[StoredMessage]]] = OrderedDict()
        """Per session, the parsed messages with seq below a watermark, as last read.
        Messages are never updated or deleted, so a read from seq 0 only fetches what lies
        at or above the watermark, after checking that nothing appeared below it."""
        self._prefix_messages = 0
        self._dialect = engine.dialect.name
        self._insert = insert_ignore(TRANSCRIPT, self._dialect)
        self._insert_returning = (
            self._insert.returning(*TRANSCRIPT.c)
            if self._dialect in ("sqlite", "postgresql")
            else None
        )

    async def close(self) -> None:
        await self.db.dispose()

    async def append(self, session_id: str, items: Sequence[tuple[int, Message, Meta]]) -> None:
        """Write messages at their seqs; a seq that already holds a message keeps it."""
        if not items:
            return
        rows = [_row(session_id, seq, message, meta) for seq, message, meta in items]
        inline = len(rows) <= INLINE_ROWS
        await self.db.write(lambda conn: conn.execute(self._insert, rows), inline=inline)

    async def put(self, session_id: str, seq: int, message: Message, meta: Meta) -> StoredMessage:
        """Write one message at ``seq`` unless the seq already holds one, and return what the
        store holds there: one round trip when the write wins (``RETURNING``), a read when an
        earlier attempt of the same activity got there first."""
        row = _row(session_id, seq, message, meta)
        returning = self._insert_returning

        def work(conn: Connection) -> StoredMessage | None:
            if returning is None:
                conn.execute(self._insert, row)
                return None
            inserted = conn.execute(returning, row).first()
            return _to_stored(inserted) if inserted is not None else None

        stored = await self.db.write(work, inline=True) or await self.get(session_id, seq)
        if stored is None:
            raise LookupError(f"message {seq} of session {session_id!r} vanished after a write")
        return stored

    async def get(self, session_id: str, seq: int) -> StoredMessage | None:
        found = await self._rows(GET, inline=True, session_id=session_id, seq=seq)
        return found[0] if found else None

    async def get_many(self, session_id: str, seqs: list[int]) -> dict[int, StoredMessage]:
        """The messages at ``seqs`` that exist, by seq, in one query."""
        found = await self._rows(
            GET_MANY, inline=len(seqs) <= INLINE_ROWS, session_id=session_id, seqs=seqs
        )
        return {stored.seq: stored for stored in found}

    async def read(
        self, session_id: str, upto_seq: int | None = None, from_seq: int = 0
    ) -> list[StoredMessage]:
        if upto_seq is None:
            return await self._rows(READ_FROM, session_id=session_id, from_seq=from_seq)
        if from_seq != 0:
            return await self._rows(
                READ_RANGE, session_id=session_id, from_seq=from_seq, upto_seq=upto_seq
            )
        return list(await self._read_prefix(session_id, upto_seq))

    async def _read_prefix(self, session_id: str, upto_seq: int) -> list[StoredMessage]:
        """Messages with seq < ``upto_seq``: the cached prefix plus what lies above it."""
        watermark, known = self._prefixes.get(session_id, (0, []))
        if watermark > upto_seq:
            watermark, known = 0, []

        def work(conn: Connection) -> list[StoredMessage] | None:
            if known:
                below = {"session_id": session_id, "upto_seq": watermark}
                if conn.execute(COUNT, below).scalar_one() != len(known):
                    return None
            params = {"session_id": session_id, "from_seq": watermark, "upto_seq": upto_seq}
            return [_to_stored(r) for r in conn.execute(READ_RANGE, params)]

        # With a cached prefix only the messages since the last read are fetched: a few.
        newer = await self.db.read(work, inline=bool(known))
        if newer is None:  # a message appeared below the watermark: read it all again
            watermark, known = 0, []
            newer = await self.db.read(work)
            assert newer is not None
        rows = known + newer
        if rows:
            # Up to the newest row read: a seq above it (the reply this read is for) may
            # still be written.
            self._remember_prefix(session_id, rows[-1].seq + 1, rows)
        return rows

    def _remember_prefix(self, session_id: str, watermark: int, rows: list[StoredMessage]) -> None:
        """Least recently read sessions go first; bounded in sessions and in messages."""
        _, old = self._prefixes.pop(session_id, (0, []))
        self._prefix_messages -= len(old)
        self._prefixes[session_id] = (watermark, rows)
        self._prefix_messages += len(rows)
        while self._prefixes and (
            len(self._prefixes) > PREFIX_CACHE_SESSIONS
            or self._prefix_messages > PREFIX_CACHE_MESSAGES
        ):
            _, (_, evicted) = self._prefixes.popitem(last=False)
            self._prefix_messages -= len(evicted)

    async def read_newest(self, session_id: str, upto_seq: int, limit: int) -> list[StoredMessage]:
        """The ``limit`` newest messages with seq < ``upto_seq``, newest first."""
        return await self._rows(
            READ_NEWEST,
            inline=limit <= INLINE_ROWS,
            session_id=session_id,
            upto_seq=upto_seq,
            limit=limit,
        )

    async def read_role(self, session_id: str, role: str, upto_seq: int) -> list[StoredMessage]:
        """Messages of one role with seq < ``upto_seq``, oldest first."""
        return await self._rows(READ_ROLE, session_id=session_id, upto_seq=upto_seq, role=role)

    async def count(self, session_id: str, upto_seq: int) -> int:
        params = {"session_id": session_id, "upto_seq": upto_seq}
        return await self.db.read(lambda conn: int(conn.execute(COUNT, params).scalar_one()))

    async def _rows(
        self, query: Select[Any], *, inline: bool = False, **params: object
    ) -> list[StoredMessage]:
        return await self.db.read(
            lambda conn: [_to_stored(r) for r in conn.execute(query, params)], inline=inline
        )


def message_json(message: Message) -> str:
    """The message as JSON; lone surrogates (unencodable as UTF-8) become U+FFFD."""
    try:
        return message.model_dump_json(exclude_defaults=True)
    except PydanticSerializationError:
        clean = scrub_surrogates(message.model_dump(exclude_defaults=True))
        return Message.model_validate(clean).model_dump_json(exclude_defaults=True)


def _row(session_id: str, seq: int, message: Message, meta: Meta) -> dict[str, object]:
    if isinstance(meta, RowMeta):
        meta = meta.to_json()
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
