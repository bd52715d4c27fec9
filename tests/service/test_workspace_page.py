"""The workspace page and endpoint of a session that decided tool calls but never wrote to
its workspace: the decisions are shown (who approved which call, on which arguments), not
hidden behind "nothing was written"."""

from __future__ import annotations

import html

from durable_loop.service.auth import COOKIE
from durable_loop.testing import reply
from tests.conftest import unique
from tests.service.conftest import ALICE
from tests.workflows.approval_kit import Payments, approval_settings


async def test_the_page_answers_who_approved_this_payment(
    loop_worker, scripted_llm, temporal_env, service
):
    payments = Payments()
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model,
        [
            reply.tool_calls(
                ("pay", {"amount": 120, "to": "acme"}, "c1"),
                ("pay", {"amount": 90, "to": "zeta"}, "c2"),
            ),
            reply.text("Paid acme."),
        ],
    )
    async with loop_worker(payments.registry()) as w, service(w) as http:
        await w.sessions.start(sid, approval_settings(scripted_llm, model, temporal_env))
        first = await w.sessions.send(sid, "pay acme and zeta", message_id=f"msg-{sid}")
        await w.sessions.confirm_tool_call(sid, "c1", "alice", comment="invoice <42>")
        await w.sessions.reject_tool_call(sid, "c2", "bob")
        final = await w.sessions.message_result(sid, first.message_id)
        api = await http.get(f"/v1/sessions/{sid}/workspace", headers=ALICE)
        http.cookies.set(COOKIE, "alice-token-0001")
        page = await http.get(f"/ui/sessions/{sid}/workspace")
    assert final.status == "completed", final
    assert api.status_code == 200, api.text
    view = api.json()
    assert view["exists"] is False
    assert [(a["op"], a["actor"], a["arguments"]) for a in view["audit"]] == [
        ("confirm", "alice", '{"amount": 120, "to": "acme"}'),
        ("reject", "bob", '{"amount": 90, "to": "zeta"}'),
    ]

    assert page.status_code == 200, page.text
    assert 'data-testid="empty"' in page.text  # nothing in the documents...
    decisions = page.text.split('data-testid="decisions"')[1].split("</table>")[0]
    approved = decisions.split('data-call-id="c1"')[1].split("</tr>")[0]
    text = html.unescape(" ".join(approved.split()))
    assert "alice approved tool call c1 (pay, turn 1)" in text
    assert 'arguments:</span> <code>{"amount": 120, "to": "acme"}</code>' in text
    assert "comment:</span> <code>invoice <42></code>" in text
    assert "&lt;42&gt;" in approved  # escaped on the page
    rejected = html.unescape(decisions.split('data-call-id="c2"')[1].split("</tr>")[0])
    assert "bob rejected tool call c2 (pay, turn 1)" in rejected
    audit = html.unescape(page.text.split('data-testid="audit"')[1].split("</table>")[0])
    assert "tool approve pay" in audit and "tool confirm" not in audit
