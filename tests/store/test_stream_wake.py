"""Tailing streamed text: a reader waiting in ``StreamStore.wait_for`` is woken by the
writer (PostgreSQL NOTIFY; in-process on SQLite) instead of waiting for its poll, and a
wake that never comes only delays a chunk: the poll still finds it."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from durable_loop.activities.llm_stream import ChunkWriter
from durable_loop.store import StoreConfig
from durable_loop.store.database import Database
from durable_loop.store.engine import async_engine, migrate
from durable_loop.store.stream import StreamStore

PG_URL = os.environ.get("DURABLE_LOOP_TEST_DB_URL")
LONG_S = 60.0
"""A poll interval no test waits for: a reader returning before it was woken."""


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, tmp_path: Path) -> str:
    if request.param == "sqlite":
        url = StoreConfig.sqlite_file(tmp_path / "store.db").url
    elif PG_URL:
        url = PG_URL
    else:
        pytest.skip("DURABLE_LOOP_TEST_DB_URL is not set")
    migrate(url)
    return url


@pytest_asyncio.fixture
async def databases(store_url: str) -> AsyncIterator[tuple[Database, Database]]:
    """The caller's and the worker's: two engines on one store, as two processes have."""
    reader, writer = Database(async_engine(store_url)), Database(async_engine(store_url))
    yield reader, writer
    await reader.dispose()
    await writer.dispose()


async def waiting(reader: StreamStore, session_id: str, **kwargs: float) -> asyncio.Task:
    task = asyncio.create_task(reader.wait_for(session_id, 0, LONG_S, **kwargs))
    while reader.readers(session_id) == 0:
        assert not task.done(), task.result()
        await asyncio.sleep(0.001)
    return task


async def test_a_written_chunk_wakes_the_waiting_reader(databases):
    reader = StreamStore(databases[0], poll_s=LONG_S)
    writer = StreamStore(databases[1])
    session_id = f"wake-{uuid.uuid4()}"
    task = await waiting(reader, session_id)

    await writer.append(session_id, 1, 1, 0, "hello")

    chunks = await task
    assert [c.text for c in chunks] == ["hello"]
    assert (reader.wakes, reader.polls) == (1, 0)
    assert reader.readers(session_id) == 0


async def test_a_chunk_whose_wake_is_lost_is_found_by_the_poll(databases):
    reader = StreamStore(databases[0], poll_s=0.02)
    silent = StreamStore(databases[1], wake=False)  # no NOTIFY, no in-process wake
    session_id = f"lost-{uuid.uuid4()}"
    task = await waiting(reader, session_id)

    await silent.append(session_id, 1, 1, 0, "still here")

    assert [c.text for c in await task] == ["still here"]
    assert reader.wakes == 0 and reader.polls >= 1


async def test_only_the_written_session_wakes(databases):
    reader = StreamStore(databases[0], poll_s=LONG_S)
    writer = StreamStore(databases[1])
    mine, other = f"mine-{uuid.uuid4()}", f"other-{uuid.uuid4()}"
    other_task = await waiting(reader, other)
    task = await waiting(reader, mine)

    await writer.append(mine, 1, 1, 0, "for me")

    assert [c.text for c in await task] == ["for me"]
    assert not other_task.done() and reader.readers(other) == 1
    other_task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await other_task
    assert reader.readers(other) == 0


async def test_a_reader_gets_what_was_written_before_it_waited(databases):
    reader = StreamStore(databases[0], poll_s=LONG_S)
    writer = StreamStore(databases[1])
    session_id = f"before-{uuid.uuid4()}"
    await writer.append(session_id, 1, 1, 0, "early")
    first = await reader.wait_for(session_id, 0, LONG_S)
    assert [c.text for c in first] == ["early"]
    assert (reader.wakes, reader.polls) == (0, 0)
    assert await reader.wait_for(session_id, first[-1].id, 0) == []


async def test_the_postgresql_listener_got_the_notification(databases, store_url):
    if not store_url.startswith("postgresql"):
        pytest.skip("NOTIFY is PostgreSQL's")
    reader = StreamStore(databases[0], poll_s=LONG_S)
    writer = StreamStore(databases[1])
    session_id = f"notify-{uuid.uuid4()}"
    task = await waiting(reader, session_id)
    await writer.append(session_id, 1, 1, 0, "via notify")
    await task
    assert reader._listener is not None and reader._listener.notifications >= 1


async def test_deltas_arriving_during_a_write_share_the_next_row(databases):
    store = StreamStore(databases[1])
    session_id = f"rows-{uuid.uuid4()}"
    writer = ChunkWriter(store, session_id, 1, 1)
    for piece in ("a", "b", "c"):  # no await yields in between: the first write is in flight
        await writer.write(piece)
    await writer.close()
    rows = await store.read(session_id)
    assert [(r.text, r.done) for r in rows] == [("abc", False), ("", True)]

    later = ChunkWriter(store, session_id, 2, 1)
    for piece in ("x", "y"):
        await later.write(piece)
        await later.flush()  # the previous write has finished: each delta is a row
    await later.close()
    rows = [r for r in await store.read(session_id) if r.seq == 2]
    assert [(r.text, r.done) for r in rows] == [("x", False), ("y", False), ("", True)]
    assert later.text == "xy" and later.rows == 3
