"""The deadline of a held call is its expiry timer, in event order: a decision sent before
it is applied even when the worker handles it after (the worker was down across it).

On the embedded dev server, whatever ``DURABLE_LOOP_TEST_SERVER`` says: the time-skipping
server does not skip time while a workflow task waits for a worker that is stopped, so
only real time can put the worker's return after the deadline."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest_asyncio
from temporalio.testing import WorkflowEnvironment

from durable_loop.cli.devserver import start_local_environment
from durable_loop.core.approvals import ApprovalSettings
from durable_loop.testing import reply
from tests.conftest import settings_for, unique
from tests.workflows.approval_kit import Payments

TTL_S = 4.0


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def temporal_env() -> AsyncIterator[WorkflowEnvironment]:
    env = await start_local_environment()
    try:
        yield env
    finally:
        await env.shutdown()


async def test_a_decision_sent_before_the_deadline_counts_though_the_worker_sees_it_after(
    loop_worker, scripted_llm
):
    payments = Payments()
    model, sid, queue = unique("m"), unique("s"), unique("q")
    scripted_llm.script(model, [reply.tool_call("pay", {"amount": 5, "to": "a"}), reply.text("ok")])
    settings = settings_for(scripted_llm, model).model_copy(
        update={"approvals": ApprovalSettings(ttl_s=TTL_S)}
    )
    async with loop_worker(payments.registry(), task_queue=queue) as w:
        await w.sessions.start(sid, settings)
        first = await w.sessions.send(sid, "pay")
        held_at = time.monotonic()
        [held] = first.pending_approvals
    await w.sessions.tool_calls.signal(sid, held.decision("confirm", "alice"))
    sent_after_s = time.monotonic() - held_at
    await asyncio.sleep(TTL_S + 1.0)  # the expiry timer fires while no worker runs
    async with loop_worker(payments.registry(), task_queue=queue) as w:
        final = await w.sessions.message_result(sid, first.message_id)
        listing = await w.sessions.tool_approvals(sid)
    assert sent_after_s < TTL_S
    assert [(d.status, d.decided_by) for d in listing.decided] == [("confirmed", "alice")]
    assert final.status == "completed" and final.reply == "ok"
    assert [(amount, to) for amount, to, _ in payments.made] == [(5, "a")]
