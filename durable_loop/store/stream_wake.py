"""Waking a reader of ``stream_chunks`` when a chunk is written, instead of polling.

PostgreSQL: the writer calls ``pg_notify`` in the transaction that inserts the chunk (so
the notification goes out exactly when the row is visible); one listener connection per
process (psycopg's native ``notifies()``) wakes every waiter of that session. Notifications
carry the session id on one channel: ``LISTEN`` needs an identifier (session ids are up to
200 characters of anything), and one channel means the listener never re-issues ``LISTEN``
while a session starts streaming.

SQLite has no notifications across processes. A writer in the same process wakes its
readers directly (``local_waiters``, keyed by database file); a writer in another process is
seen by the reader's next cheap poll.

A wake is only a hint: readers always re-read the table, and fall back to polling on a
timeout, so a lost notification (listener reconnecting, another process) delays a chunk
but never loses it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections import defaultdict
from collections.abc import Callable
from types import ModuleType

from sqlalchemy.engine import URL

from durable_loop.core.extras import import_extra

CHANNEL = "durable_loop_stream"
NOTIFY = "SELECT pg_notify('durable_loop_stream', :session_id)"
log = logging.getLogger(__name__)


class Ticket:
    """One reader's interest in one session; ``wait`` returns True when woken."""

    def __init__(self, release: Callable[[Ticket], None]) -> None:
        self._loop = asyncio.get_running_loop()
        self._event = asyncio.Event()
        self._release = release
        self.blocked = False
        """In ``wait`` right now: it has looked at the store and found nothing yet."""

    def wake(self) -> None:
        """Safe from any thread."""
        with contextlib.suppress(RuntimeError):  # the reader's loop has closed
            self._loop.call_soon_threadsafe(self._event.set)

    async def wait(self, timeout: float) -> bool:
        self.blocked = True
        try:
            await asyncio.wait_for(self._event.wait(), timeout)
        except TimeoutError:
            return False
        finally:
            self.blocked = False
        self._event.clear()
        return True

    def close(self) -> None:
        self._release(self)


class Waiters:
    """Tickets by session id, shared between threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_session: dict[str, set[Ticket]] = defaultdict(set)

    def ticket(self, session_id: str) -> Ticket:
        def release(ticket: Ticket) -> None:
            with self._lock:
                tickets = self._by_session.get(session_id)
                if tickets is not None:
                    tickets.discard(ticket)
                    if not tickets:
                        del self._by_session[session_id]

        ticket = Ticket(release)
        with self._lock:
            self._by_session[session_id].add(ticket)
        return ticket

    def count(self, session_id: str) -> int:
        """Readers of the session blocked in ``wait`` (registered readers still looking at
        the store are not counted: a chunk written now may be found by that look)."""
        with self._lock:
            return sum(t.blocked for t in self._by_session.get(session_id, ()))

    def wake(self, session_id: str) -> None:
        with self._lock:
            tickets = list(self._by_session.get(session_id, ()))
        for ticket in tickets:
            ticket.wake()


_LOCAL_LOCK = threading.Lock()
_LOCAL: dict[str, Waiters] = {}


def local_waiters(database: str) -> Waiters:
    """In-process wakes for SQLite, one ``Waiters`` per database file: the worker's
    ``StreamStore`` and a caller's (two instances, one file) reach the same readers."""
    with _LOCAL_LOCK:
        return _LOCAL.setdefault(database, Waiters())


class PgListener:
    """One ``LISTEN`` connection per store, opened on the first wait and kept until
    ``close``; it reconnects after an error (readers poll meanwhile)."""

    def __init__(self, url: URL, waiters: Waiters, *, retry_s: float = 1.0) -> None:
        self._psycopg: ModuleType = import_extra("psycopg", "the PostgreSQL store")
        self._conninfo = url.set(drivername="postgresql").render_as_string(hide_password=False)
        self.waiters = waiters
        self.retry_s = retry_s
        self.notifications = 0
        self._task: asyncio.Task[None] | None = None
        self._listening = asyncio.Event()

    async def ensure_started(self, timeout: float) -> None:
        """Start listening if not yet; wait up to ``timeout`` for ``LISTEN`` to be in place."""
        if self._task is None or self._task.done():
            self._listening = asyncio.Event()
            self._task = asyncio.create_task(self._run(), name="durable-loop-stream-listener")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._listening.wait(), timeout)

    async def _run(self) -> None:
        while True:
            try:
                async with await self._psycopg.AsyncConnection.connect(
                    self._conninfo, autocommit=True
                ) as conn:
                    await conn.execute(f"LISTEN {CHANNEL}")
                    self._listening.set()
                    async for note in conn.notifies():
                        self.notifications += 1
                        self.waiters.wake(note.payload)
            except self._psycopg.Error as err:
                self._listening.clear()
                log.warning("stream listener lost its connection (%s); readers poll meanwhile", err)
                await asyncio.sleep(self.retry_s)

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
