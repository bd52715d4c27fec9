"""`POST /v1/sessions/{id}/tool-policies/{call}/withdraw`: the token's identity withdraws a
standing approval; an unknown one is refused with its code."""

from __future__ import annotations

from durable_loop.core.approvals import Remember
from durable_loop.testing import reply
from tests.conftest import unique
from tests.service.conftest import ALICE
from tests.workflows.approval_kit import Payments, approval_settings


async def test_withdraw_a_standing_approval_over_http(
    loop_worker, scripted_llm, temporal_env, service
):
    payments = Payments()
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model, [reply.tool_call("pay", {"amount": 5, "to": "a"}, "c1"), reply.text("ok")]
    )
    async with loop_worker(payments.registry()) as w, service(w) as http:
        await w.sessions.start(sid, approval_settings(scripted_llm, model, temporal_env))
        first = await w.sessions.send(sid, "pay")
        [held] = first.pending_approvals
        await w.sessions.decide_tool_call(sid, held.decision("confirm", "bob", remember=Remember()))
        base = f"/v1/sessions/{sid}/tool-policies"
        unknown = await http.post(f"{base}/c9/withdraw", json={}, headers=ALICE)
        withdrawn = await http.post(f"{base}/c1/withdraw", json={"comment": "done"}, headers=ALICE)
        listing = await w.sessions.tool_approvals(sid)
    assert unknown.status_code == 404, unknown.text
    assert unknown.json()["error"]["code"] == "UNKNOWN_TOOL_CALL"
    assert withdrawn.status_code == 200, withdrawn.text
    assert (withdrawn.json()["tool"], withdrawn.json()["approved_by"]) == ("pay", "bob")
    assert listing.policies == []
