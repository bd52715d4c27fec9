"""Running store work off the event loop: each call is one function of a SQLAlchemy
``Connection``, executed in one connection and, for writes, one transaction.

SQLite runs the standard ``sqlite3`` driver in a small thread pool: one thread hop per call.
Through aiosqlite every statement costs four or five hops between the event loop and the
connection's thread (cursor, execute, fetch, close, reset on return): ~1 ms of CPU for a
one-row read, against ~0.3 ms for ``TranscriptStore.get`` this way (``bench/store_ops.py``).
PostgreSQL keeps its async driver (psycopg), the function running in SQLAlchemy's greenlet
bridge. The transcript, stream and workspace stores all use it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.ext.asyncio import AsyncEngine

T = TypeVar("T")
SQLITE_THREADS = 16


def tune_sqlite(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


class Database:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self._sync: Engine | None = None
        self._threads: ThreadPoolExecutor | None = None
        url = engine.url
        if url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
            self._sync = create_engine(
                url.set(drivername="sqlite"),
                pool_size=SQLITE_THREADS,
                max_overflow=0,
                connect_args={"timeout": 30, "check_same_thread": False},
            )
            event.listen(self._sync, "connect", tune_sqlite)
            self._threads = ThreadPoolExecutor(SQLITE_THREADS, thread_name_prefix="sqlite-store")

    async def read(self, work: Callable[[Connection], T]) -> T:
        if self._sync is not None:
            return await self._in_thread(work, write=False)
        async with self.engine.connect() as conn:
            return await conn.run_sync(work)

    async def write(self, work: Callable[[Connection], T]) -> T:
        if self._sync is not None:
            return await self._in_thread(work, write=True)
        async with self.engine.begin() as conn:
            return await conn.run_sync(work)

    async def _in_thread(self, work: Callable[[Connection], T], *, write: bool) -> T:
        sync, threads = self._sync, self._threads
        assert sync is not None and threads is not None

        def run() -> T:
            with sync.begin() if write else sync.connect() as conn:
                return work(conn)

        return await asyncio.get_running_loop().run_in_executor(threads, run)

    async def dispose(self) -> None:
        if self._threads is not None:
            self._threads.shutdown(wait=True)
        if self._sync is not None:
            self._sync.dispose()
        await self.engine.dispose()
