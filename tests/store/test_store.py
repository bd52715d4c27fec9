"""The transcript store: insert-if-absent writes, ordered reads, reused results."""

from __future__ import annotations

import asyncio
import uuid

import pytest_asyncio

from durable_loop.activities.appends import REUSED_WARNING, write_appends
from durable_loop.core.activity_contracts import AppendItem
from durable_loop.core.envelope import Envelope
from durable_loop.core.messages import Message, ToolCall
from durable_loop.store import StoreConfig, open_store, transcript


def fresh(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


@pytest_asyncio.fixture
async def store(store_url):
    opened = open_store(StoreConfig(url=store_url))
    yield opened
    await opened.close()


async def test_a_seq_keeps_its_first_message(store):
    await store.append("s1", [(0, Message.user("first"), {"n": 1})])
    await store.append("s1", [(0, Message.user("second"), {"n": 2})])
    (row,) = await store.read("s1")
    assert row.message.content == "first" and row.meta == {"n": 1}


async def test_concurrent_writers_of_one_seq_leave_one_row(store):
    writes = [store.append("s2", [(5, Message.user(f"w{i}"), {})]) for i in range(8)]
    await asyncio.gather(*writes)
    rows = await store.read("s2")
    assert len(rows) == 1 and rows[0].seq == 5


async def test_put_returns_what_the_seq_holds_whoever_wrote_it(store):
    first = await store.put("p1", 3, Message.user("first\ud800"), {"n": 1, "k": "\udfff"})
    assert (first.seq, first.message.content, first.meta) == (
        3,
        "first\ufffd",
        {"n": 1, "k": "\ufffd"},
    )
    assert first.created_at is not None
    again = await store.put("p1", 3, Message.user("second"), {"n": 2})
    assert (again.message.content, again.meta) == ("first\ufffd", {"n": 1, "k": "\ufffd"})
    assert again == await store.get("p1", 3)


async def test_concurrent_puts_of_one_seq_all_return_the_winner(store):
    puts = [store.put("p2", 0, Message.user(f"w{i}"), {"i": i}) for i in range(8)]
    results = await asyncio.gather(*puts)
    assert len({r.message.content for r in results}) == 1
    assert [r.seq for r in await store.read("p2")] == [0]


async def test_get_many_returns_the_seqs_that_exist(store):
    await store.append("g1", [(i, Message.user(str(i)), {}) for i in (0, 1, 2)])
    await store.append("g2", [(5, Message.user("other session"), {})])
    found = await store.get_many("g1", [2, 0, 5])
    assert sorted(found) == [0, 2] and found[2].message.content == "2"
    assert await store.get_many("g1", []) == {}


async def test_a_batch_with_existing_rows_still_writes_the_new_ones(store):
    await store.append("s3", [(1, Message.user("one"), {})])
    await store.append("s3", [(0, Message.user("zero"), {}), (1, Message.user("dup"), {})])
    assert [(r.seq, r.message.content) for r in await store.read("s3")] == [
        (0, "zero"),
        (1, "one"),
    ]


async def test_reads_are_ordered_bounded_and_per_session(store):
    await store.append("s4", [(i, Message.user(str(i)), {}) for i in (3, 0, 2, 1)])
    await store.append("other", [(0, Message.user("x"), {})])
    assert [r.seq for r in await store.read("s4")] == [0, 1, 2, 3]
    assert [r.seq for r in await store.read("s4", upto_seq=2)] == [0, 1]
    assert [r.seq for r in await store.read("s4", from_seq=2)] == [2, 3]
    assert (await store.get("s4", 2)).message.content == "2"
    assert await store.get("s4", 9) is None


async def test_messages_round_trip_with_tool_calls_and_envelopes(store):
    assistant = Message(
        role="assistant", content=None, tool_calls=[ToolCall(id="c", name="add", arguments="{")]
    )
    result = Message.tool_result("c", "add", Envelope.failure("INVALID_JSON", "bad"))
    await store.append("s5", [(0, assistant, {}), (1, result, {"turn": 1})])
    first, second = await store.read("s5")
    assert first.message == assistant and second.message == result


async def test_write_appends_copies_a_reused_result_under_the_new_call_id(store):
    original = Message.tool_result("c1", "add", Envelope.success(3))
    await store.append("s6", [(2, original, {})])
    appends = [
        AppendItem(seq=3, message=Message.user("u")),
        AppendItem(seq=4, copy_result_from=2, tool_call_id="c2", tool_name="add"),
        AppendItem(seq=5, copy_result_from=99, tool_call_id="c3", tool_name="add"),
    ]
    await write_appends(store, "s6", appends)
    await write_appends(store, "s6", appends)  # a retried activity writes nothing twice
    rows = await store.read("s6")
    assert [r.seq for r in rows] == [2, 3, 4, 5]
    reused = rows[2].message
    assert reused.tool_call_id == "c2" and reused.envelope.data == 3
    assert reused.envelope.reused and not reused.envelope.deduplicated
    assert REUSED_WARNING in reused.envelope.warnings
    assert rows[2].meta == {"reused_from": 2}
    assert rows[3].message.envelope.ok is False


async def test_reads_from_the_start_reuse_the_parsed_prefix_and_see_every_new_row(store):
    c1 = fresh("c1")  # the PostgreSQL suite shares one database across runs
    await store.append(c1, [(i, Message.user(str(i)), {}) for i in (0, 1, 3)])
    first = await store.read(c1, upto_seq=4)
    assert [r.seq for r in first] == [0, 1, 3]
    first.clear()  # callers get their own list
    await store.append(c1, [(4, Message.user("4"), {}), (5, Message.user("5"), {})])
    again = await store.read(c1, upto_seq=6)
    assert [r.seq for r in again] == [0, 1, 3, 4, 5]
    assert again[0] is (await store.read(c1, upto_seq=6))[0], "the prefix was not re-parsed"
    await store.append(c1, [(2, Message.user("late"), {})])  # a gap below the watermark
    assert [r.seq for r in await store.read(c1, upto_seq=6)] == [0, 1, 2, 3, 4, 5]
    assert [r.seq for r in await store.read(c1, upto_seq=2)] == [0, 1]
    assert [r.seq for r in await store.read(c1, upto_seq=6)] == [0, 1, 2, 3, 4, 5]


async def test_the_prefix_cache_is_bounded_in_messages(store, monkeypatch):
    monkeypatch.setattr(transcript, "PREFIX_CACHE_MESSAGES", 5)
    b1, b2, big = fresh("b1"), fresh("b2"), fresh("big")
    for session in (b1, b2):
        await store.append(session, [(i, Message.user(str(i)), {}) for i in range(3)])
        assert len(await store.read(session, upto_seq=3)) == 3
    assert list(store._prefixes) == [b2] and store._prefix_messages == 3
    await store.append(big, [(i, Message.user(str(i)), {}) for i in range(8)])
    assert len(await store.read(big, upto_seq=8)) == 8
    assert store._prefix_messages <= 5
