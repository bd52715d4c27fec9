"""The settlement of an ``effect="once"`` call: the first settlement wins, in one statement,
on SQLite and PostgreSQL (``DURABLE_LOOP_TEST_DB_URL``)."""

from __future__ import annotations

import asyncio
import uuid

import pytest
import pytest_asyncio

from durable_loop.store import StoreConfig, open_store
from durable_loop.store.tool_attempts import (
    NO_BODY,
    ToolAttempts,
    settle_in,
    settled_by_in,
    settlement,
)


@pytest_asyncio.fixture
async def attempts(store_url):
    opened = open_store(StoreConfig(url=store_url))
    yield ToolAttempts(opened.db, opened.engine.dialect.name)
    await opened.close()


def fresh_key() -> str:
    return f"wf-{uuid.uuid4().hex[:8]}:c1:2"


async def settle(attempts: ToolAttempts, key: str, by: int) -> bool:
    return await attempts.settle(key, session_id="s1", call_id="c1", by=by)


async def test_the_first_settlement_wins(attempts):
    key = fresh_key()
    assert await attempts.settled_by(key) is None
    assert await settle(attempts, key, NO_BODY) is True
    assert await settle(attempts, key, 1) is False  # the late body loses
    assert await attempts.settled_by(key) == NO_BODY


async def test_of_concurrent_settlements_one_wins(attempts):
    key = fresh_key()
    won = await asyncio.gather(*(settle(attempts, key, by) for by in (NO_BODY, 1, 2, 3)))
    assert sorted(won) == [False, False, False, True]
    assert await attempts.settled_by(key) == [NO_BODY, 1, 2, 3][won.index(True)]


async def test_a_settlement_is_not_an_attempt_marker(attempts):
    key = fresh_key()
    await settle(attempts, key, 1)
    assert await attempts.begin(key, session_id="s1", call_id="c1", attempt=2) is None


async def test_a_renewed_attempt_drops_a_dead_bodys_settlement_but_not_a_doubt(attempts):
    """Reconcile said the effect did not happen: the body runs again and may settle the call;
    a call put in doubt stays settled without a body."""
    died, doubted = fresh_key(), fresh_key()
    for key, by in ((died, 1), (doubted, NO_BODY)):
        await attempts.begin(key, session_id="s1", call_id="c1", attempt=1)
        await settle(attempts, key, by)
        await attempts.renew(key, 2)
    assert await attempts.settled_by(died) is None
    assert await settle(attempts, died, 2) is True
    assert await attempts.settled_by(doubted) == NO_BODY


async def test_a_settlement_inside_another_transaction_commits_with_it(attempts):
    """The audit row of a person's answer settles the call in its own transaction: rolled
    back with it, or committed with it."""
    rolled_back, committed = fresh_key(), fresh_key()

    def settle_then_fail(conn):
        settle_in(conn, rolled_back, session_id="s1", call_id="c1", by=NO_BODY)
        raise RuntimeError("the audit write failed")

    with pytest.raises(RuntimeError):
        await attempts.db.write(settle_then_fail, inline=True)

    def settle_twice(conn):
        won = settle_in(conn, committed, session_id="s1", call_id="c1", by=NO_BODY)
        lost = settle_in(conn, committed, session_id="s1", call_id="c1", by=1)
        return won, lost, settled_by_in(conn, committed)

    assert await attempts.db.write(settle_twice, inline=True) == (True, False, NO_BODY)
    assert await attempts.settled_by(rolled_back) is None
    assert await attempts.settled_by(committed) == NO_BODY
    assert [settlement(by) for by in (None, NO_BODY, 2)] == [
        "nobody yet",
        "no body (in doubt)",
        "the body of attempt 2",
    ]
