"""One verb for people over HTTP and on the page: ``approve`` / ``reject``, with
``confirm`` still accepted; the stored verdict stays ``confirm`` (histories unchanged)."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from durable_loop.core.proposals import VerdictInput, stored_verdict
from durable_loop.service.auth import COOKIE
from durable_loop.testing import reply
from tests.conftest import unique
from tests.service.conftest import ALICE
from tests.workflows.approval_kit import Payments, approval_settings

PAY = {"amount": 250, "to": "acme"}


def test_the_words_a_person_sends_map_to_the_stored_verdicts():
    words = TypeAdapter(VerdictInput)
    assert [words.validate_python(w) for w in ("approve", "confirm", "reject")] == [
        "confirm",
        "confirm",
        "reject",
    ]
    with pytest.raises(ValidationError):
        words.validate_python("yes")
    assert stored_verdict("Approve") == "confirm" and stored_verdict("maybe") == "maybe"


async def test_approve_is_accepted_over_http_and_stored_as_confirm(
    loop_worker, scripted_llm, temporal_env, service
):
    payments = Payments()
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model,
        [
            reply.tool_calls(("pay", PAY, "c1"), ("pay", {"amount": 9, "to": "bob"}, "c2")),
            reply.text("Done."),
        ],
    )
    async with loop_worker(payments.registry()) as w, service(w) as http:
        await w.sessions.start(sid, approval_settings(scripted_llm, model, temporal_env))
        await http.post(f"/v1/sessions/{sid}/messages", json={"text": "pay"}, headers=ALICE)
        listed = await http.get(f"/v1/sessions/{sid}/tool-calls", headers=ALICE)
        prints = {c["call_id"]: c["fingerprint"] for c in listed.json()["pending"]}
        base = f"/v1/sessions/{sid}/tool-calls"
        approved = await http.post(
            f"{base}/c1/decision",
            json={"verdict": "approve", "fingerprint": prints["c1"]},
            headers=ALICE,
        )
        old_word = await http.post(
            f"{base}/c2/decision",
            json={"verdict": "confirm", "fingerprint": prints["c2"]},
            headers=ALICE,
        )
        bad = await http.post(
            f"{base}/c2/decision", json={"verdict": "yes", "fingerprint": "f" * 64}, headers=ALICE
        )
        schema = (await http.get("/openapi.json")).json()
        histories = await w.histories(sid)
    assert approved.status_code == 200, approved.text
    assert approved.json()["status"] == "confirmed" and approved.json()["decided_by"] == "alice"
    assert old_word.status_code == 200, old_word.text
    assert bad.status_code == 422
    verdict = schema["components"]["schemas"]["DecideToolCall"]["properties"]["verdict"]
    assert set(verdict["enum"]) == {"approve", "reject", "confirm"}
    sent = [
        e.workflow_execution_update_accepted_event_attributes.accepted_request.input.args
        for h in histories
        for e in h.events
        if e.HasField("workflow_execution_update_accepted_event_attributes")
    ]
    decisions = [p.data.decode() for args in sent for p in args.payloads if b"verdict" in p.data]
    assert len(decisions) == 2 and all('"verdict":"confirm"' in d for d in decisions)
    assert sorted(a for a, _, _ in payments.made) == [9, 250]


async def test_the_page_says_approve_and_posts_it(loop_worker, scripted_llm, temporal_env, service):
    payments = Payments()
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.tool_calls(("pay", PAY, "c1")), reply.text("Paid.")])
    async with loop_worker(payments.registry()) as w, service(w) as http:
        await w.sessions.start(sid, approval_settings(scripted_llm, model, temporal_env))
        await w.sessions.send(sid, "pay")
        [held] = (await w.sessions.tool_approvals(sid)).pending
        http.cookies.set(COOKIE, "alice-token-0001")
        page = await http.get("/ui/approvals")
        form = {"session_id": sid, "call_id": "c1", "fingerprint": held.fingerprint}
        posted = await http.post("/ui/tool-call", data={**form, "verdict": "approve"})
        after = await http.get(posted.headers["location"])
    card = page.text.split('data-call-id="c1"')[1].split("</article>")[0]
    assert 'value="approve"' in card and ">Approve<" in card and 'value="confirm"' not in card
    assert posted.status_code == 303, posted.text
    assert (
        f"Tool call <code>c1</code> (<code>pay</code>) of session <code>{sid}</code>" in after.text
    )
    assert "was <strong>approved</strong> by alice" in after.text
    assert [(a, to) for a, to, _ in payments.made] == [(250, "acme")]
