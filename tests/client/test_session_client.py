"""The Python client API for services, against the time-skipping test server."""

from __future__ import annotations

import pytest
import pytest_asyncio
from temporalio.client import WorkflowUpdateFailedError

from durable_loop.testing import reply
from durable_loop.testing.pytest_plugin import running_test_environment
from durable_loop.tools.workspace import workspace_tools
from durable_loop.workflows import visibility
from tests.client.kit import (
    session_with_proposal,
    with_search_attributes,
    workspace_store,
)
from tests.conftest import settings_for, unique
from tests.workflows.approval_kit import Payments, approval_settings
from tests.workflows.proposal_kit import day, eventually


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def temporal_env():
    """A server of this module's own: skipping simulated days must not wait on another
    module's leftover workflow task (no worker polls it, so it locks time skipping)."""
    async with running_test_environment() as env:
        yield env


@pytest_asyncio.fixture
async def ws(store_url):
    store = workspace_store(store_url)
    yield store
    await store.close()


async def test_update_with_start_is_idempotent_by_message_id(loop_worker, scripted_llm):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.text("hello"), reply.text("second")])
    async with loop_worker() as w:
        settings = settings_for(scripted_llm, model)
        first = await w.sessions.start_and_send(sid, settings, "hi", message_id="k1")
        again = await w.sessions.start_and_send(sid, settings, "hi", message_id="k1")
        status = await w.sessions.status(sid)
    assert (first.reply, again.reply) == ("hello", "hello")
    assert again.message_id == first.message_id == "k1"
    assert status.messages_done == 1
    assert len(scripted_llm.requests(model)) == 1


async def test_signal_with_start_queues_the_message(loop_worker, scripted_llm):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.text("queued reply")])
    async with loop_worker() as w:
        await w.sessions.start_and_post(sid, settings_for(scripted_llm, model), "hello")

        async def done():
            status = await w.sessions.status(sid)
            return status if status.messages_done == 1 else None

        status = await eventually(done)
    assert status.last_result is not None
    assert status.last_result.reply == "queued reply"


async def test_search_attributes_and_memo_follow_the_session(
    loop_worker, scripted_llm, temporal_env, ws
):
    async with loop_worker(workspace_tools(ws)) as w:
        await with_search_attributes(w)
        model, sid, pending = await session_with_proposal(
            w, ws, scripted_llm, temporal_env, title="Rename the doc"
        )
        described = await w.sessions.handle(sid).describe()
        attrs = described.typed_search_attributes
        assert attrs.get(visibility.PENDING_PROPOSALS) == 1
        assert attrs.get(visibility.STATUS) == "idle"
        assert attrs.get(visibility.MODEL) == model
        assert attrs.get(visibility.TURNS) == 2
        assert (
            attrs.get(visibility.TOTAL_TOKENS) == (await w.sessions.status(sid)).usage.total_tokens
        )
        assert await described.memo_value(visibility.MEMO_TITLE) == "Rename the doc"
        assert await described.memo_value(visibility.MEMO_SESSION) == sid

        result = await w.sessions.confirm(sid, pending.proposal_id, "alice", comment="ok")
        assert (result.status, result.decided_by, result.comment) == ("committed", "alice", "ok")

        async def settled():
            current = (await w.sessions.handle(sid).describe()).typed_search_attributes
            return current.get(visibility.PENDING_PROPOSALS) == 0

        await eventually(settled)
        await w.sessions.close(sid)
        await w.sessions.handle(sid).result()
        final = (await w.sessions.handle(sid).describe()).typed_search_attributes
    assert final.get(visibility.STATUS) == "closed"
    assert (await ws.snapshot(sid)).facts["title"] == "New title"


async def test_reject_and_refusals_carry_codes(loop_worker, scripted_llm, temporal_env, ws):
    async with loop_worker(workspace_tools(ws)) as w:
        _, sid, pending = await session_with_proposal(
            w, ws, scripted_llm, temporal_env, ttl_days=1.0
        )
        assert [p.proposal_id for p in await w.sessions.pending_proposals(sid)] == [
            pending.proposal_id
        ]
        with pytest.raises(WorkflowUpdateFailedError) as stale:
            await w.sessions.confirm(sid, pending.proposal_id, "bob", fingerprint="f" * 64)
        assert stale.value.cause.message.startswith("FINGERPRINT_MISMATCH")
        rejected = await w.sessions.reject(sid, pending.proposal_id, "bob", comment="no")
        assert (rejected.status, rejected.decided_by) == ("rejected", "bob")
        with pytest.raises(WorkflowUpdateFailedError) as twice:
            await w.sessions.reject(sid, pending.proposal_id, "bob")
        assert twice.value.cause.message.startswith("ALREADY_DECIDED")
    assert (await ws.snapshot(sid)).facts["title"] == "Old title"


async def test_decision_after_expiry_is_refused(loop_worker, scripted_llm, temporal_env, ws):
    async with loop_worker(workspace_tools(ws)) as w:
        _, sid, pending = await session_with_proposal(
            w, ws, scripted_llm, temporal_env, ttl_days=1.0
        )
        await temporal_env.sleep(2 * day(temporal_env))
        with pytest.raises(WorkflowUpdateFailedError) as late:
            await w.sessions.confirm(
                sid, pending.proposal_id, "alice", fingerprint=pending.fingerprint
            )
        listing = await w.sessions.proposals(sid)
    message = late.value.cause.message
    assert message.startswith(("EXPIRED", "ALREADY_DECIDED")), message
    assert [d.status for d in listing.decided] == ["expired"]


async def test_trace_reads_history_and_store(loop_worker, scripted_llm, store_url):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.text("traced")])
    async with loop_worker() as w:
        await w.sessions.start_and_send(sid, settings_for(scripted_llm, model), "hi")
        trace = await w.sessions.trace(sid, db_url=store_url)
    assert trace.session_id == sid
    assert [t.model for t in trace.turns] == [model]
    assert trace.messages == 2


async def test_a_held_tool_call_shows_in_the_search_attributes(
    loop_worker, scripted_llm, temporal_env
):
    payments = Payments()
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model, [reply.tool_call("pay", {"amount": 1, "to": "a"}, "c1"), reply.text("Paid.")]
    )
    async with loop_worker(payments.registry()) as w:
        await with_search_attributes(w)
        await w.sessions.start(sid, approval_settings(scripted_llm, model, temporal_env))
        first = await w.sessions.send(sid, "pay")

        async def waiting():
            attrs = (await w.sessions.handle(sid).describe()).typed_search_attributes
            return attrs if attrs.get(visibility.PENDING_PROPOSALS) == 1 else None

        attrs = await eventually(waiting)
        status = await w.sessions.status(sid)
        await w.sessions.confirm_tool_call(sid, "c1", "alice")
        await w.sessions.message_result(sid, first.message_id)

        async def settled():
            current = (await w.sessions.handle(sid).describe()).typed_search_attributes
            return current.get(visibility.STATUS) == "idle"

        await eventually(settled)
        final = (await w.sessions.handle(sid).describe()).typed_search_attributes
    assert attrs.get(visibility.STATUS) == "awaiting_approval"
    assert status.state == "awaiting_approval"
    assert final.get(visibility.PENDING_PROPOSALS) == 0
