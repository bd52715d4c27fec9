"""The attempt markers of ``effect="once"`` tools: a row written before the body runs.

A row keyed by the call's idempotency key says "an attempt of this call started its body
and has not told how it ended". The tool activity writes it before the body, deletes it
when the body raised (the tool itself said it failed: retrying is its own business), and
leaves it once a result is stored (the result row answers every later attempt first). So a
later attempt that finds a row and no result knows the attempt before it died inside the
body: the effect may or may not have happened, and the body must not simply run again.

Who settles the call is a second row, keyed ``<key>#settled`` and written insert-if-absent,
so the first settlement wins: the attempt whose body's result is stored (its number), or
:data:`NO_BODY` when the call went in doubt and a person's answer becomes its result. A
body that returns after that (it ignored its timeout and outlived its activity) loses the
insert, and its result is not stored: the model and the audit read the same answer.

A person's answer to a call in doubt settles it too, by :data:`NO_BODY`, in the transaction
that writes the answer's audit row (:func:`settle_in`): a body that returns after the answer
loses, however late the worker learns that its activity timed out on the server.
"""

from __future__ import annotations

from datetime import datetime
from typing import cast

from sqlalchemy import (
    Connection,
    DateTime,
    Integer,
    String,
    Table,
    bindparam,
    delete,
    func,
    select,
    update,
)
from sqlalchemy.orm import Mapped, mapped_column

from durable_loop.store.database import Database, insert_ignore
from durable_loop.store.schema import Base


class ToolAttemptRow(Base):
    __tablename__ = "tool_attempts"

    idempotency_key: Mapped[str] = mapped_column(String(400), primary_key=True)
    session_id: Mapped[str] = mapped_column(String(200))
    call_id: Mapped[str] = mapped_column(String(200))
    attempt: Mapped[int] = mapped_column(Integer)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


ATTEMPTS = cast(Table, ToolAttemptRow.__table__)
_KEY = ATTEMPTS.c.idempotency_key == bindparam("key")
GET = select(ATTEMPTS.c.attempt).where(_KEY)
RENEW = update(ATTEMPTS).where(_KEY).values(attempt=bindparam("new_attempt"))
END = delete(ATTEMPTS).where(_KEY)
SETTLED_SUFFIX = "#settled"
NO_BODY = 0
"""A settlement by no body's result: the call went in doubt (a person answers for it)."""


UNSETTLE_BODY = delete(ATTEMPTS).where(_KEY, ATTEMPTS.c.attempt != NO_BODY)


def settled_key(key: str) -> str:
    return key + SETTLED_SUFFIX


def settle_in(conn: Connection, key: str, *, session_id: str, call_id: str, by: int) -> bool:
    """:meth:`ToolAttempts.settle` inside a transaction the caller holds (an audit row's)."""
    row = {
        "idempotency_key": settled_key(key),
        "session_id": session_id,
        "call_id": call_id,
        "attempt": by,
    }
    settle = insert_ignore(ATTEMPTS, conn.dialect.name).returning(ATTEMPTS.c.attempt)
    return conn.execute(settle, row).first() is not None  # rowcount: -1 on psycopg


def settled_by_in(conn: Connection, key: str) -> int | None:
    return conn.execute(GET, {"key": settled_key(key)}).scalar_one_or_none()


def settlement(by: int | None) -> str:
    """Who settled a call, as an audit row says it."""
    if by is None:
        return "nobody yet"
    return "no body (in doubt)" if by == NO_BODY else f"the body of attempt {by}"


class ToolAttempts:
    def __init__(self, db: Database, dialect: str) -> None:
        self.db = db
        self._insert = insert_ignore(ATTEMPTS, dialect)

    async def begin(self, key: str, *, session_id: str, call_id: str, attempt: int) -> int | None:
        """Mark that ``attempt`` starts the body; the attempt an earlier marker names (which
        is then kept as it is) when one exists, else None."""
        row = {"idempotency_key": key, "session_id": session_id, "call_id": call_id}

        def work(conn: Connection) -> int | None:
            prior = conn.execute(GET, {"key": key}).scalar_one_or_none()
            if prior is None:
                conn.execute(self._insert, {**row, "attempt": attempt})
            return prior

        return await self.db.write(work, inline=True)

    async def renew(self, key: str, attempt: int) -> None:
        """``attempt`` runs the body after all (reconcile said the effect did not happen): a
        settlement by the earlier attempt's body, which died before storing its result, goes."""

        def work(conn: Connection) -> None:
            conn.execute(RENEW, {"key": key, "new_attempt": attempt})
            conn.execute(UNSETTLE_BODY, {"key": settled_key(key)})

        await self.db.write(work, inline=True)

    async def end(self, key: str) -> None:
        """The body ended by raising: the next attempt may run it again."""
        await self.db.write(lambda conn: conn.execute(END, {"key": key}), inline=True)

    async def settle(self, key: str, *, session_id: str, call_id: str, by: int) -> bool:
        """Settle the call of marker ``key`` by ``by`` (an attempt number, or
        :data:`NO_BODY`) unless it is settled already; whether this settlement won."""
        return await self.db.write(
            lambda conn: settle_in(conn, key, session_id=session_id, call_id=call_id, by=by),
            inline=True,
        )

    async def settled_by(self, key: str) -> int | None:
        """Who settled the call of marker ``key``: an attempt, :data:`NO_BODY`, or None."""
        return await self.db.read(lambda conn: settled_by_in(conn, key), inline=True)
