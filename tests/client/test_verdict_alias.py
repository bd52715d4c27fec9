"""The Python clients take ``approve`` as a person's verdict and send the stored verdict
``confirm`` (by Update and by Signal), so the workflow and its histories are unchanged."""

from __future__ import annotations

from durable_loop.core.approvals import ToolCallDecision
from durable_loop.testing import reply
from tests.conftest import unique
from tests.workflows.approval_kit import Payments, approval_settings
from tests.workflows.proposal_kit import eventually

PAY = {"amount": 250, "to": "acme"}


async def test_approve_by_update_and_by_signal(loop_worker, scripted_llm, temporal_env):
    payments = Payments()
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model,
        [
            reply.tool_calls(("pay", PAY, "c1"), ("pay", {"amount": 5, "to": "bob"}, "c2")),
            reply.text("Both paid."),
        ],
    )
    async with loop_worker(payments.registry()) as w:
        await w.sessions.start(sid, approval_settings(scripted_llm, model, temporal_env))
        await w.sessions.send(sid, "pay both", message_id="m1")
        held = {c.call_id: c for c in (await w.sessions.tool_approvals(sid)).pending}

        def approve(call_id: str) -> ToolCallDecision:
            return ToolCallDecision(
                call_id=call_id,
                verdict="approve",
                approver="alice",
                fingerprint=held[call_id].fingerprint,
                session_id=sid,
            )

        by_update = await w.sessions.decide_tool_call(sid, approve("c1"))
        await w.sessions.tool_calls.signal(sid, approve("c2"))

        async def both_decided():
            listing = await w.sessions.tool_approvals(sid)
            return listing if len(listing.decided) == 2 else None

        listing = await eventually(both_decided)
        final = await w.sessions.message_result(sid, "m1")
    assert by_update.status == "confirmed"
    assert {d.call_id: d.status for d in listing.decided} == {"c1": "confirmed", "c2": "confirmed"}
    assert listing.refused == []
    assert final.status == "completed"
    assert sorted(a for a, _, _ in payments.made) == [5, 250]
