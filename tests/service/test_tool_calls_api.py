"""The tool-approval endpoints: list, decide (confirm, edit, reject), wait for a result."""

from __future__ import annotations

from durable_loop.testing import reply
from tests.conftest import unique
from tests.service.conftest import ALICE, BOB
from tests.workflows.approval_kit import Payments, approval_settings

PAY = {"amount": 250, "to": "acme"}


def code_of(response) -> str:
    return response.json()["error"]["code"]


async def test_decide_held_calls_over_http(loop_worker, scripted_llm, temporal_env, service):
    payments = Payments()
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model,
        [
            reply.tool_calls(("pay", PAY, "c1"), ("pay", {"amount": 9, "to": "bob"}, "c2")),
            reply.text("Done."),
        ],
    )
    settings = approval_settings(scripted_llm, model, temporal_env)
    async with loop_worker(payments.registry()) as w, service(w) as http:
        await w.sessions.start(sid, settings)
        keyed = {**ALICE, "Idempotency-Key": "pay-1"}
        first = await http.post(f"/v1/sessions/{sid}/messages", json={"text": "pay"}, headers=keyed)
        listed = await http.get(f"/v1/sessions/{sid}/tool-calls", headers=ALICE)
        pending = {c["call_id"]: c for c in listed.json()["pending"]}
        base = f"/v1/sessions/{sid}/tool-calls"
        unbound = await http.post(f"{base}/c1/decision", json={"verdict": "confirm"}, headers=ALICE)
        bad_edit = await http.post(
            f"{base}/c1/decision",
            json={
                "verdict": "confirm",
                "fingerprint": pending["c1"]["fingerprint"],
                "arguments": {"amount": "all", "to": "acme"},
            },
            headers=ALICE,
        )
        unknown = await http.post(
            f"{base}/c9/decision",
            json={"verdict": "reject", "fingerprint": "f" * 64},
            headers=ALICE,
        )
        edited = await http.post(
            f"{base}/c1/decision",
            json={
                "verdict": "confirm",
                "fingerprint": pending["c1"]["fingerprint"],
                "arguments": {"amount": 100, "to": "acme"},
            },
            headers=ALICE,
        )
        rejected = await http.post(
            f"{base}/c2/decision",
            json={
                "verdict": "reject",
                "fingerprint": pending["c2"]["fingerprint"],
                "comment": "no",
            },
            headers=ALICE,
        )
        twice = await http.post(
            f"{base}/c2/decision",
            json={"verdict": "reject", "fingerprint": pending["c2"]["fingerprint"]},
            headers=ALICE,
        )
        message_id = first.json()["message_id"]
        final = await http.get(f"/v1/sessions/{sid}/messages/{message_id}/result", headers=ALICE)
        missing = await http.get(f"/v1/sessions/{sid}/messages/nope/result", headers=ALICE)
        across = await http.get("/v1/proposals", headers=ALICE)
    assert first.status_code == 200 and first.json()["status"] == "awaiting_approval"
    assert set(pending) == {"c1", "c2"} and pending["c1"]["arguments"] == PAY
    assert (unbound.status_code, code_of(unbound)) == (428, "FINGERPRINT_REQUIRED")
    assert (bad_edit.status_code, code_of(bad_edit)) == (422, "INVALID_ARGS")
    assert (unknown.status_code, code_of(unknown)) == (404, "UNKNOWN_TOOL_CALL")
    assert edited.status_code == 200, edited.text
    assert edited.json()["decided_by"] == "alice" and edited.json()["edited_fields"] == ["amount"]
    assert rejected.json()["status"] == "rejected"
    assert (twice.status_code, code_of(twice)) == (409, "ALREADY_DECIDED")
    assert final.status_code == 200 and final.json()["reply"] == "Done."
    assert (missing.status_code, code_of(missing)) == (404, "UNKNOWN_MESSAGE")
    assert across.json()["tool_calls"] == []
    assert [(a, to) for a, to, _ in payments.made] == [(100, "acme")]


async def test_pending_calls_are_listed_across_sessions(
    loop_worker, scripted_llm, temporal_env, service
):
    payments = Payments()
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.tool_call("pay", PAY, "c1"), reply.text("Paid.")])
    async with loop_worker(payments.registry()) as w, service(w) as http:
        await w.sessions.start(sid, approval_settings(scripted_llm, model, temporal_env))
        await w.sessions.send(sid, "pay")
        across = (await http.get("/v1/proposals", headers=ALICE)).json()
    [item] = [i for i in across["tool_calls"] if i["session_id"] == sid]
    assert item["call"]["tool"] == "pay" and '"amount": 250' in item["arguments_pretty"]


async def test_a_tool_call_decision_without_a_fingerprint_follows_the_proposal_rule(
    loop_worker, scripted_llm, temporal_env, service
):
    """428 FINGERPRINT_REQUIRED, as for proposals; a trusted service binds it to the call
    pending now."""
    payments = Payments()
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.tool_call("pay", PAY, "c1"), reply.text("Paid.")])
    async with loop_worker(payments.registry()) as w:
        await w.sessions.start(sid, approval_settings(scripted_llm, model, temporal_env))
        sent = await w.sessions.send(sid, "pay")
        url = f"/v1/sessions/{sid}/tool-calls/c1/decision"
        async with service(w) as http:
            unbound = await http.post(url, json={"verdict": "confirm"}, headers=ALICE)
            still = await w.sessions.tool_approvals(sid)
        async with service(w, allow_unbound_decisions=True) as trusted:
            confirmed = await trusted.post(url, json={"verdict": "confirm"}, headers=ALICE)
        final = await w.sessions.message_result(sid, sent.message_id)
    assert (unbound.status_code, code_of(unbound)) == (428, "FINGERPRINT_REQUIRED")
    assert "fingerprint of the tool call" in unbound.json()["error"]["message"]
    assert [c.call_id for c in still.pending] == ["c1"]
    assert confirmed.status_code == 200, confirmed.text
    assert confirmed.json()["status"] == "confirmed" and confirmed.json()["decided_by"] == "alice"
    assert final.reply == "Paid." and [(a, to) for a, to, _ in payments.made] == [(250, "acme")]


async def test_a_token_whose_identity_may_not_decide_the_tool_gets_403_and_an_audit_row(
    loop_worker, scripted_llm, temporal_env, service, ws
):
    payments = Payments()
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.tool_call("pay", PAY, "c1"), reply.text("Paid.")])
    settings = approval_settings(scripted_llm, model, temporal_env, approvers={"pay": ["bob"]})
    async with loop_worker(payments.registry()) as w, service(w) as http:
        await w.sessions.start(sid, settings)
        first = await w.sessions.send(sid, "pay")
        [held] = first.pending_approvals
        url = f"/v1/sessions/{sid}/tool-calls/c1/decision"
        bound = {"verdict": "confirm", "fingerprint": held.fingerprint}
        by_alice = await http.post(url, json=bound, headers=ALICE)
        by_bob = await http.post(url, json=bound, headers=BOB)
        final = await w.sessions.message_result(sid, first.message_id)
    assert (by_alice.status_code, code_of(by_alice)) == (403, "APPROVER_NOT_ALLOWED")
    assert by_bob.status_code == 200 and by_bob.json()["decided_by"] == "bob"
    audit = [(a.op, a.actor) for a in await ws.audit(sid) if a.target == "tool"]
    assert audit == [("refused", "alice"), ("confirm", "bob")]
    assert final.reply == "Paid." and [(a, to) for a, to, _ in payments.made] == [(250, "acme")]
