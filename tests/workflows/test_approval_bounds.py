"""No bound drops a decision (issue 28): a turn that holds more calls than the book keeps
decisions for (``DECIDED_KEPT``) runs every approved one."""

from __future__ import annotations

import pytest_asyncio

from durable_loop.core.config import RuntimeConfig
from durable_loop.testing import reply
from durable_loop.testing.pytest_plugin import start_test_environment
from durable_loop.workflows.proposals import DECIDED_KEPT
from tests.conftest import unique
from tests.workflows.approval_kit import Payments, approval_settings


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def temporal_env():
    env = await start_test_environment()
    try:
        yield env
    finally:
        await env.shutdown()


async def test_every_approved_call_of_a_turn_holding_more_than_the_kept_decisions_runs(
    loop_worker, scripted_llm, temporal_env
):
    count = DECIDED_KEPT + 2
    calls = [("pay", {"amount": i, "to": "acme"}, f"c{i}") for i in range(count)]
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.tool_calls(*calls), reply.text("All paid.")])
    payments = Payments()
    runtime = RuntimeConfig(max_tool_calls_per_turn=count)
    settings = approval_settings(scripted_llm, model, temporal_env, runtime=runtime)
    async with loop_worker(payments.registry()) as w:
        await w.sessions.start(sid, settings)
        first = await w.sessions.send(sid, "pay everyone", message_id=f"msg-{sid}")
        assert len(first.pending_approvals) == count, first
        for held in first.pending_approvals:
            await w.sessions.decide_tool_call(sid, held.decision("confirm", "alice"))
        final = await w.sessions.message_result(sid, first.message_id)
    assert final.status == "completed", final
    assert sorted(a for a, _, _ in payments.made) == list(range(count))
    assert all(t.ok and t.executed for t in final.tool_calls), [
        t.error_codes for t in final.tool_calls if not t.ok
    ]
