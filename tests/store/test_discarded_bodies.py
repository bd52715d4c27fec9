"""The audit row of a once call's late body whose result was discarded: keyed (written
once), naming when the body finished and who had settled the call, never the result."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from durable_loop.store import StoreConfig
from durable_loop.store.workspace import open_workspace_store
from durable_loop.store.workspace_decision_audit import DiscardedBody, record_discarded_body
from tests.conftest import unique


def discarded(wid: str) -> DiscardedBody:
    return DiscardedBody(
        workspace_id=wid,
        session_id="s1",
        call_id="c1",
        turn=1,
        tool="send_mail",
        attempt=1,
        finished_at=datetime(2026, 11, 27, 9, 12, 3, tzinfo=UTC),
        settled_by="no body (in doubt)",
        why="after the call was settled",
        key=f"tool-discarded:{wid}:c1:2:1",
    )


async def test_a_discarded_body_is_audited_once(store_url):
    wid = unique("w")
    store = open_workspace_store(StoreConfig(url=store_url))
    try:
        body = discarded(wid)
        written = await asyncio.gather(*(record_discarded_body(store, body) for _ in range(3)))
        [row] = await store.audit(wid)
    finally:
        await store.close()
    assert sorted(written) == [False, False, True]
    assert (row.target, row.op, row.path, row.actor, row.actor_kind, row.call_id, row.turn) == (
        "tool",
        "discard",
        "send_mail",
        "system:worker",
        "system",
        "c1",
        1,
    )
    assert row.value == {
        "attempt": 1,
        "finished_at": "2026-11-27T09:12:03+00:00",
        "settled_by": "no body (in doubt)",
    }
    assert row.comment == (
        "the body of attempt 1 finished at 2026-11-27 09:12:03 UTC, after the call was "
        "settled; the call is settled by no body (in doubt); result discarded"
    )
