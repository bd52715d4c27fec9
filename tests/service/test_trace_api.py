"""`GET /v1/sessions/{id}/trace` on a session with decisions and a budget change: 200
with the entries (it answered 500 when a decision's result was read as a RunResult), and
the replies whole with ``?full=true``."""

from __future__ import annotations

from durable_loop.client.trace.models import Trace
from tests.client.trace.kit import decided_session
from tests.service.conftest import ALICE
from tests.workflows.approval_kit import Payments


async def test_the_trace_endpoint_answers_with_decisions_and_budget_changes(
    loop_worker, scripted_llm, temporal_env, service
):
    async with loop_worker(Payments().registry()) as w, service(w) as http:
        session = await decided_session(w, scripted_llm, temporal_env)
        url = f"/v1/sessions/{session.session_id}/trace"
        answer = await http.get(url, headers=ALICE)
        full = await http.get(url, params={"full": "true"}, headers=ALICE)
    assert answer.status_code == full.status_code == 200, answer.text
    trace = Trace.model_validate(answer.json())
    assert [(e.kind, e.via) for e in trace.entries] == [
        ("tool_call_decision", "update"),
        ("refusal", "signal"),
        ("tool_call_decision", "update"),
        ("tool_call_decision", "signal"),
        ("budget_change", "update"),
    ]
    assert answer.json()["entries"][1]["error"]["code"] == "FINGERPRINT_MISMATCH"
    assert [m.status for m in trace.by_message] == [r.status for r in session.results]
    replies = [m["reply"]["text"] for m in full.json()["by_message"]]
    assert replies == [r.reply for r in session.results]
