"""How store calls run on SQLite: small ones on the caller's thread, never waiting there."""

from __future__ import annotations

import asyncio
import sqlite3
import sys
import threading
import time
from asyncio.subprocess import PIPE
from pathlib import Path

import pytest
import pytest_asyncio
from sqlalchemy import Connection, text

from durable_loop.store import StoreConfig
from durable_loop.store.database import Database
from durable_loop.store.engine import async_engine, migrate

CREATE = "CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)"


@pytest.fixture
def db_file(tmp_path: Path) -> Path:
    path = tmp_path / "store.db"
    migrate(StoreConfig.sqlite_file(path).url)
    return path


@pytest_asyncio.fixture
async def db(db_file: Path):
    opened = Database(async_engine(StoreConfig.sqlite_file(db_file).url), checkpoint_every=10)
    await opened.write(lambda conn: conn.execute(text(CREATE)))
    yield opened
    await opened.dispose()


def insert(body: str):
    def work(conn: Connection) -> int:
        conn.execute(text("INSERT INTO notes (body) VALUES (:body)"), {"body": body})
        return threading.get_ident()

    return work


def count(conn: Connection) -> int:
    return int(conn.execute(text("SELECT count(*) FROM notes")).scalar_one())


async def test_inline_calls_run_on_the_callers_thread_and_others_in_the_pool(db):
    here = threading.get_ident()
    assert await db.write(insert("inline"), inline=True) == here
    assert await db.write(insert("pooled")) != here
    assert await db.read(lambda conn: (count(conn), threading.get_ident()), inline=True) == (
        2,
        here,
    )


async def test_an_inline_write_that_finds_the_database_locked_waits_in_the_pool(db, db_file):
    """Another process's writer holds the lock: the write neither fails nor blocks the
    event loop; it runs again in the pool and lands once the lock is released."""
    other = sqlite3.connect(db_file, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    other.execute("INSERT INTO notes (body) VALUES ('other')")
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.01)

    ticking = asyncio.create_task(ticker())
    asyncio.get_running_loop().call_later(0.3, other.execute, "COMMIT")
    started = time.perf_counter()
    writer = await db.write(insert("ours"), inline=True)
    waited = time.perf_counter() - started
    ticking.cancel()
    other.close()
    assert writer != threading.get_ident()
    assert db.inline_fallbacks == 1
    assert waited >= 0.25 and ticks >= 15  # the loop kept running while the write waited
    assert await db.read(count, inline=True) == 2


async def test_an_inline_read_is_not_blocked_by_a_writer(db, db_file):
    other = sqlite3.connect(db_file, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    other.execute("INSERT INTO notes (body) VALUES ('uncommitted')")
    try:
        assert await db.read(count, inline=True) == 0
        assert db.inline_fallbacks == 0
    finally:
        other.execute("ROLLBACK")
        other.close()


async def test_errors_other_than_a_lock_are_raised_not_retried(db):
    def broken(conn: Connection) -> None:
        conn.execute(text("INSERT INTO no_such_table VALUES (1)"))

    with pytest.raises(Exception, match="no_such_table"):
        await db.write(broken, inline=True)
    assert db.inline_fallbacks == 0


async def test_inline_writes_leave_checkpoints_to_the_pool(db, db_file):
    """Inline connections never checkpoint (an fsync on the event loop); every
    ``checkpoint_every`` inline writes a passive checkpoint runs in the pool instead."""
    pragma = "PRAGMA wal_autocheckpoint"
    assert await db.read(lambda conn: conn.exec_driver_sql(pragma).scalar(), inline=True) == 0
    assert await db.read(lambda conn: conn.exec_driver_sql(pragma).scalar()) == 1000
    for i in range(30):
        await db.write(insert("x" * 2000 + str(i)), inline=True)
    deadline = time.monotonic() + 5
    while db.checkpoints < 3 and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert db.checkpoints == 3 and db.last_checkpoint is not None
    busy, frames, done = db.last_checkpoint
    assert busy == 0 and frames > 0 and done == frames
    assert await db.read(count) == 30


async def test_an_in_memory_database_runs_inline_calls_through_its_async_engine():
    memory = Database(async_engine("sqlite:///:memory:"))
    try:
        one = await memory.read(
            lambda conn: conn.execute(text("SELECT 1")).scalar_one(), inline=True
        )
        assert one == 1 and memory.inline_fallbacks == 0
    finally:
        await memory.dispose()


WRITER = """
import asyncio, sys
from pathlib import Path
from sqlalchemy import text
from durable_loop.store import StoreConfig
from durable_loop.store.database import Database
from durable_loop.store.engine import async_engine

async def main(path, name, n):
    db = Database(async_engine(StoreConfig.sqlite_file(Path(path)).url), checkpoint_every=50)
    gate = asyncio.Semaphore(16)
    print("ready", flush=True)
    while not Path(path + ".go").exists():
        await asyncio.sleep(0.005)

    async def one(i):
        async with gate:
            await db.write(
                lambda conn: conn.execute(
                    text("INSERT INTO notes (body) VALUES (:body)"), {"body": f"{name}-{i}"}
                ),
                inline=True,
            )

    await asyncio.gather(*(one(i) for i in range(n)))
    print(db.inline_fallbacks)
    await db.dispose()

asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
"""


async def test_processes_writing_one_file_at_once_lose_and_double_nothing(db, db_file):
    """Three processes, 16 writes in flight each: writes that find the file locked run
    again in the pool, and every one lands exactly once."""
    writers = [
        await asyncio.create_subprocess_exec(
            sys.executable, "-c", WRITER, str(db_file), name, "400", stdout=PIPE, stderr=PIPE
        )
        for name in ("a", "b", "c")
    ]
    for writer in writers:
        assert writer.stdout is not None
        assert await writer.stdout.readline() == b"ready\n"
    Path(f"{db_file}.go").touch()  # all start writing at once
    outputs = [await writer.communicate() for writer in writers]
    assert [writer.returncode for writer in writers] == [0, 0, 0], outputs
    fallbacks = sum(int(out.decode()) for out, _ in outputs)

    def rows(conn: Connection) -> tuple[int, int]:
        found = conn.execute(text("SELECT count(*), count(DISTINCT body) FROM notes")).one()
        return int(found[0]), int(found[1])

    assert await db.read(rows) == (1200, 1200)
    assert fallbacks > 0  # they did contend


async def test_processes_starting_together_on_a_new_file_all_migrate(tmp_path: Path):
    """Workers started at once on a fresh SQLite file each migrate on start: they take
    turns, and every one of them comes up (before, two could both create the schema)."""
    url = StoreConfig.sqlite_file(tmp_path / "fresh.db").url
    script = "import sys; from durable_loop.store.engine import migrate; migrate(sys.argv[1])"
    procs = [
        await asyncio.create_subprocess_exec(sys.executable, "-c", script, url, stderr=PIPE)
        for _ in range(4)
    ]
    outcomes = [(await p.wait(), (await p.stderr.read()).decode()) for p in procs]
    assert [code for code, _ in outcomes] == [0, 0, 0, 0], outcomes
    with sqlite3.connect(tmp_path / "fresh.db") as conn:
        [(revisions,)] = conn.execute("SELECT count(*) FROM alembic_version").fetchall()
    assert revisions == 1
