"""Audit rows of tool-call decisions: keyed, so a retried activity records a decision once."""

from __future__ import annotations

import asyncio

import pytest_asyncio

from durable_loop.core.proposals import DecisionAudit
from durable_loop.store import StoreConfig
from durable_loop.store.workspace import open_workspace_store
from durable_loop.store.workspace_decision_audit import record_decision
from tests.conftest import unique


@pytest_asyncio.fixture
async def store(store_url):
    ws = open_workspace_store(StoreConfig(url=store_url))
    yield ws
    await ws.close()


async def test_a_decision_is_audited_once_per_key(store):
    wid = unique("w")
    audit = DecisionAudit(
        workspace_id=wid,
        session_id="s1",
        target="tool",
        op="edit",
        path="pay",
        actor="alice",
        turn=3,
        call_id="c1",
        comment="agreed",
        value={"fingerprint": "f" * 64, "edited_fields": ["amount"]},
        key=f"tool-decision:{wid}:c1:7",
    )
    written = await asyncio.gather(*(record_decision(store, audit) for _ in range(3)))
    again = await record_decision(store, audit)
    other = await record_decision(
        store, audit.model_copy(update={"op": "reject", "key": unique("k2")})
    )
    rows = await store.audit(wid)
    assert sorted(written) == [False, False, True] and again is False and other is True
    assert [(r.target, r.op, r.path, r.actor, r.actor_kind, r.turn, r.call_id) for r in rows] == [
        ("tool", "edit", "pay", "alice", "human", 3, "c1"),
        ("tool", "reject", "pay", "alice", "human", 3, "c1"),
    ]
    assert rows[0].value == {"fingerprint": "f" * 64, "edited_fields": ["amount"]}
    assert (await store.snapshot(wid)).version == 0
