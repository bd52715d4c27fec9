"""Withdrawing a standing approval (Update ``withdraw_tool_policy``): later calls of the
tool wait for a person again; the withdrawal, and a refused one, are audited."""

from __future__ import annotations

import pytest
import pytest_asyncio
from temporalio.client import WorkflowUpdateFailedError

from durable_loop.core.approvals import Remember
from durable_loop.store import StoreConfig
from durable_loop.store.workspace import open_workspace_store
from durable_loop.testing import reply
from durable_loop.testing.pytest_plugin import running_test_environment
from tests.conftest import unique
from tests.workflows.approval_kit import Payments, approval_settings


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def temporal_env():
    async with running_test_environment() as env:
        yield env


@pytest_asyncio.fixture
async def ws(store_url):
    store = open_workspace_store(StoreConfig(url=store_url))
    yield store
    await store.close()


async def test_a_withdrawn_standing_approval_settles_no_new_call(
    loop_worker, scripted_llm, temporal_env, ws
):
    payments = Payments()
    model, sid = unique("m"), unique("s")
    pay = {"amount": 5, "to": "acme"}
    scripted_llm.script(
        model,
        [
            reply.tool_call("pay", pay, "c1"),
            reply.text("Paid."),
            reply.tool_call("pay", pay, "c2"),
            reply.text("Paid without asking."),
            reply.tool_call("pay", pay, "c3"),
            reply.text("This one waits."),
        ],
    )
    async with loop_worker(payments.registry()) as w:
        await w.sessions.start(sid, approval_settings(scripted_llm, model, temporal_env))
        first = await w.sessions.send(sid, "pay")
        [held] = first.pending_approvals
        await w.sessions.decide_tool_call(
            sid, held.decision("confirm", "alice", remember=Remember())
        )
        await w.sessions.message_result(sid, first.message_id)
        second = await w.sessions.send(sid, "pay again")
        calls = w.sessions.tool_calls
        with pytest.raises(WorkflowUpdateFailedError) as unknown:
            await calls.withdraw_policy(sid, "c2", "bob")
        withdrawn = await calls.withdraw_policy(sid, "c1", "bob", comment="no more")
        third = await w.sessions.send(sid, "pay once more")
        listing = await w.sessions.tool_approvals(sid)
        audit = [(a.op, a.actor, a.call_id, a.comment) for a in await ws.audit(sid)]
    assert second.status == "completed" and second.reply == "Paid without asking."
    assert unknown.value.cause.type == "UNKNOWN_TOOL_CALL"
    assert "no standing approval was set on call 'c2'" in str(unknown.value.cause)
    assert (withdrawn.tool, withdrawn.call_id, withdrawn.approved_by) == ("pay", "c1", "alice")
    assert third.status == "awaiting_approval"
    assert [p.call_id for p in third.pending_approvals] == ["c3"]
    assert listing.policies == [] and len(payments.made) == 2
    assert ("withdraw", "bob", "c1", "no more") in audit
    assert [(op, actor) for op, actor, *_ in audit if op == "refused"] == [("refused", "bob")]
