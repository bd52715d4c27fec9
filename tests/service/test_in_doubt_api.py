"""`POST /v1/sessions/{id}/tool-calls/{call}/answer`: a person settles a call in doubt over
HTTP, bound to the fingerprint they saw; the token's identity answers."""

from __future__ import annotations

from durable_loop.service.auth import COOKIE
from tests.service.conftest import ALICE
from tests.workflows.proposal_kit import tool_envelopes
from tests.workflows.test_in_doubt_answers import held_in_doubt
from tests.workflows.test_once_tools import Mailer


async def test_run_it_again_over_http(loop_worker, scripted_llm, service):
    mailer = Mailer()
    async with loop_worker(mailer.registry()) as w, service(w) as http:
        model, sid, first, held = await held_in_doubt(w, scripted_llm)
        base = f"/v1/sessions/{sid}/tool-calls"
        listed = await http.get(base, headers=ALICE)
        unbound = await http.post(f"{base}/c1/answer", json={"answer": "run_again"}, headers=ALICE)
        as_approval = await http.post(
            f"{base}/c1/decision",
            json={"verdict": "approve", "fingerprint": held.fingerprint},
            headers=ALICE,
        )
        answered = await http.post(
            f"{base}/c1/answer",
            json={"answer": "run_again", "fingerprint": held.fingerprint},
            headers=ALICE,
        )
        final = await w.sessions.message_result(sid, first.message_id)
        [envelope] = tool_envelopes(scripted_llm.requests(model)[1])
    [pending] = listed.json()["pending"]
    assert (pending["kind"], pending["call_id"]) == ("in_doubt", "c1")
    assert unbound.status_code == 428
    assert as_approval.status_code == 422, as_approval.text
    assert as_approval.json()["error"]["code"] == "INVALID_DECISION"
    assert answered.status_code == 200, answered.text
    assert answered.json()["status"] == "run_again" and answered.json()["decided_by"] == "alice"
    assert mailer.sent == ["ana@example.com"] and envelope["ok"] is True
    assert final.status == "completed"


async def test_the_page_shows_a_call_in_doubt_and_posts_the_answer(
    loop_worker, scripted_llm, service
):
    mailer = Mailer()
    async with loop_worker(mailer.registry()) as w, service(w) as http:
        model, sid, first, held = await held_in_doubt(w, scripted_llm)
        http.cookies.set(COOKIE, "alice-token-0001")
        page = await http.get("/ui/approvals")
        form = {"session_id": sid, "call_id": "c1", "fingerprint": held.fingerprint}
        posted = await http.post(
            "/ui/tool-call-answer", data={**form, "answer": "happened", "result": "it went out"}
        )
        final = await w.sessions.message_result(sid, first.message_id)
        [envelope] = tool_envelopes(scripted_llm.requests(model)[1])
    card = page.text.split('data-call-id="c1"')[1].split("</article>")[0]
    assert 'data-testid="in-doubt"' in card and ">It happened<" in card
    assert 'value="approve"' not in card
    assert posted.status_code == 303 and "error" not in posted.headers["location"]
    assert envelope["data"] == "it went out" and final.status == "completed"
    assert mailer.sent == []
