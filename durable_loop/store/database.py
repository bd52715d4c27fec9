"""Running store work: each call is one function of a SQLAlchemy ``Connection``, executed
in one connection and, for writes, one transaction.

SQLite runs the standard ``sqlite3`` driver. Calls that touch a handful of rows
(``inline=True``: one message, one workspace, a proposal) run right on the caller's thread:
a thread hop costs more than the statement (a context switch and a GIL hand-off each way;
at 100 busy sessions the hops were ~18 % of the worker's CPU, ``bench/throughput.py``).
They never wait there: their connections have a busy timeout of 0, and a call that finds
the database locked by another writer runs again in the thread pool, where waiting is
harmless. Nor do they checkpoint there (the fsyncs): their connections leave the WAL alone,
and every ``CHECKPOINT_EVERY`` inline writes a passive checkpoint runs in the pool.
Everything else (reads of unknown size) goes to a small thread pool, one hop per call;
through aiosqlite every statement cost four or five hops (``bench/store_ops.py``).

PostgreSQL keeps its async driver (psycopg), the function running in SQLAlchemy's greenlet
bridge; ``inline`` changes nothing there. The transcript, stream and workspace stores all
use this class.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, Insert, Table, create_engine, event, insert
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine

T = TypeVar("T")
SQLITE_THREADS = 16
INLINE_CONNECTIONS = 4
CHECKPOINT_EVERY = 200
log = logging.getLogger(__name__)


def tune_sqlite(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


def tune_inline_sqlite(dbapi_connection: Any, _record: Any) -> None:
    """Never wait for a lock, never checkpoint: both would stall the caller's event loop."""
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA busy_timeout=0")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA wal_autocheckpoint=0")
    cursor.close()


def insert_ignore(table: Table, dialect: str) -> Insert:
    """``INSERT`` that leaves an existing row (same key) alone, on SQLite and PostgreSQL."""
    if dialect == "sqlite":
        return sqlite_insert(table).on_conflict_do_nothing()
    if dialect == "postgresql":
        return pg_insert(table).on_conflict_do_nothing()
    return insert(table)


def is_busy(err: OperationalError) -> bool:
    """SQLite could not get a lock (another writer holds it, or the snapshot went stale)."""
    return "locked" in str(err) or "busy" in str(err)


class _Busy(Exception):
    pass


class Database:
    def __init__(self, engine: AsyncEngine, *, checkpoint_every: int = CHECKPOINT_EVERY) -> None:
        self.engine = engine
        self.checkpoint_every = checkpoint_every
        self.inline_fallbacks = 0
        """Inline calls that found the database locked and ran in the thread pool instead."""
        self.checkpoints = 0
        """Passive checkpoints run so far."""
        self.last_checkpoint: tuple[int, int, int] | None = None
        """(busy, WAL frames, frames checkpointed) of the latest one."""
        self._sync: Engine | None = None
        self._inline: Engine | None = None
        self._threads: ThreadPoolExecutor | None = None
        self._inline_writes = 0
        self.closers: list[Callable[[], Awaitable[None]]] = []
        """Run first by ``dispose`` (e.g. a stream listener's connection)."""
        url = engine.url
        if url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
            url = url.set(drivername="sqlite")
            self._sync = create_engine(
                url,
                pool_size=SQLITE_THREADS,
                max_overflow=0,
                connect_args={"timeout": 30, "check_same_thread": False},
            )
            event.listen(self._sync, "connect", tune_sqlite)
            self._inline = create_engine(
                url,
                pool_size=INLINE_CONNECTIONS,
                max_overflow=2 * INLINE_CONNECTIONS,
                connect_args={"timeout": 0, "check_same_thread": False},
            )
            event.listen(self._inline, "connect", tune_inline_sqlite)
            self._threads = ThreadPoolExecutor(SQLITE_THREADS, thread_name_prefix="sqlite-store")

    async def read(self, work: Callable[[Connection], T], *, inline: bool = False) -> T:
        """``inline``: ``work`` reads a handful of rows (see the module docstring)."""
        return await self._run(work, write=False, inline=inline)

    async def write(self, work: Callable[[Connection], T], *, inline: bool = False) -> T:
        """``inline``: ``work`` writes a handful of rows; it may run twice (the first
        transaction rolled back) when the database was locked."""
        return await self._run(work, write=True, inline=inline)

    async def _run(self, work: Callable[[Connection], T], *, write: bool, inline: bool) -> T:
        if self._sync is None:
            async with self.engine.begin() if write else self.engine.connect() as conn:
                return await conn.run_sync(work)
        if inline:
            with contextlib.suppress(_Busy):
                return self._run_inline(work, write=write)
        return await self._in_thread(work, write=write)

    def _run_inline(self, work: Callable[[Connection], T], *, write: bool) -> T:
        engine = self._inline
        assert engine is not None
        try:
            with engine.begin() if write else engine.connect() as conn:
                result = work(conn)
        except OperationalError as err:
            if not is_busy(err):
                raise
            self.inline_fallbacks += 1
            raise _Busy from err
        if write:
            self._inline_writes += 1
            if self._inline_writes % self.checkpoint_every == 0:
                self._checkpoint_soon()
        return result

    def _checkpoint_soon(self) -> None:
        sync, threads = self._sync, self._threads
        assert sync is not None and threads is not None

        def checkpoint() -> None:
            with sync.connect() as conn:
                row = conn.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)").one()
            self.last_checkpoint = (int(row[0]), int(row[1]), int(row[2]))
            self.checkpoints += 1

        def report(done: Future[None]) -> None:
            if not done.cancelled() and done.exception() is not None:
                log.warning("WAL checkpoint failed: %s", done.exception())

        with contextlib.suppress(RuntimeError):  # disposed: the last close checkpoints anyway
            threads.submit(checkpoint).add_done_callback(report)

    async def _in_thread(self, work: Callable[[Connection], T], *, write: bool) -> T:
        sync, threads = self._sync, self._threads
        assert sync is not None and threads is not None

        def run() -> T:
            with sync.begin() if write else sync.connect() as conn:
                return work(conn)

        return await asyncio.get_running_loop().run_in_executor(threads, run)

    async def dispose(self) -> None:
        for close in self.closers:
            await close()
        if self._threads is not None:
            self._threads.shutdown(wait=True)
        if self._inline is not None:
            self._inline.dispose()
        if self._sync is not None:
            self._sync.dispose()
        await self.engine.dispose()
