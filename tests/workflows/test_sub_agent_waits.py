"""A call held inside a sub-agent makes the parent's message wait for a person as its own
held calls do (patch ``sub-agent-calls-wait``): the send answers ``awaiting_approval``
(not with ``wait_for_approval``), the status says so, and the decision stays listed. The
sub-agent, once ended, says ``closed``."""

from __future__ import annotations

import asyncio

from durable_loop.core.sub_agents import child_session_id
from durable_loop.testing import reply
from tests.conftest import settings_for, unique
from tests.workflows.approval_kit import Payments
from tests.workflows.proposal_kit import eventually
from tests.workflows.test_sub_agents import TASK, registry_with, researcher


async def test_a_send_that_waits_for_approval_gets_the_final_result(loop_worker, scripted_llm):
    parent_model, child_model = unique("p"), unique("c")
    payments = Payments()
    scripted_llm.script(
        parent_model, [reply.tool_call("researcher", TASK, "r1"), reply.text("all paid")]
    )
    scripted_llm.script(
        child_model, [reply.tool_call("pay", {"amount": 5, "to": "acme"}, "c1"), reply.text("ok")]
    )
    config = researcher(scripted_llm, child_model, tools=["pay"])
    async with loop_worker(registry_with(config, tools=payments.registry())) as w:
        sid = unique("s")
        await w.sessions.start(sid, settings_for(scripted_llm, parent_model))
        waiting = asyncio.ensure_future(w.sessions.send(sid, "pay acme", wait_for_approval=True))

        async def held():
            return (await w.sessions.tool_approvals(sid)).pending

        [call] = await eventually(held)
        status = await w.sessions.status(sid)
        assert not waiting.done()
        await w.sessions.confirm_tool_call(sid, "c1", "alice")
        final = await asyncio.wait_for(waiting, 30)
        listing = await w.sessions.tool_approvals(sid)
        child = await w.sessions.status(call.session_id)  # a Query of its closed workflow
    assert call.session_id == child_session_id(sid, "r1", 2)
    assert status.state == "awaiting_approval"
    assert (final.status, final.reply) == ("completed", "all paid")
    assert [(d.call_id, d.decided_by, d.status) for d in listing.decided] == [
        ("c1", "alice", "confirmed")
    ]
    assert len(payments.made) == 1
    assert (child.state, child.messages_done) == ("closed", 1)
