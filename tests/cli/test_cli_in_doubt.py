"""`durable-loop tool-calls answer` settles a call in doubt; `pending` and `tool-calls list`
show it; `tool-calls approve --remember` keeps a standing approval as `approve` does, and
`tool-calls withdraw` ends it."""

from __future__ import annotations

import json

from durable_loop.testing import reply
from tests.cli.test_cli_proposals import invoke
from tests.conftest import unique
from tests.workflows.approval_kit import Payments, approval_settings
from tests.workflows.proposal_kit import tool_envelopes
from tests.workflows.test_in_doubt_answers import held_in_doubt
from tests.workflows.test_once_tools import Mailer


async def test_answer_a_call_in_doubt_from_the_command_line(
    loop_worker, scripted_llm, temporal_env
):
    mailer = Mailer()
    async with loop_worker(mailer.registry()) as w:
        model, sid, first, _ = await held_in_doubt(w, scripted_llm)
        waiting = await invoke(temporal_env, "pending", sid)
        listed = await invoke(temporal_env, "tool-calls", "list", sid)
        wrong = await invoke(temporal_env, "tool-calls", "answer", sid, "c1", "maybe", "--as", "al")
        approved = await invoke(temporal_env, "tool-calls", "approve", sid, "c1", "--as", "al")
        answered = await invoke(
            temporal_env,
            "tool-calls",
            "answer",
            sid,
            "c1",
            "happened",
            "--as",
            "al",
            "--result",
            "sent at 09:12",
            "--json",
        )
        final = await w.sessions.message_result(sid, first.message_id)
        [envelope] = tool_envelopes(scripted_llm.requests(model)[1])
    assert waiting.exit_code == 0 and "c1  in doubt   send_mail" in waiting.stdout
    assert "tool-calls answer" in waiting.stdout
    assert listed.exit_code == 0 and "in doubt: whether 'send_mail' took effect" in listed.stdout
    assert wrong.exit_code == 2 and "INVALID_DECISION" in wrong.output
    assert approved.exit_code == 2 and "is in doubt: answer one of" in approved.output
    assert answered.exit_code == 0, answered.output
    assert json.loads(answered.stdout)["status"] == "happened"
    assert envelope["data"] == "sent at 09:12" and final.status == "completed"
    assert mailer.sent == []


async def test_tool_calls_approve_remembers(loop_worker, scripted_llm, temporal_env):
    payments = Payments()
    model, sid = unique("m"), unique("s")
    small = {"amount": 5, "to": "acme"}
    scripted_llm.script(
        model,
        [
            reply.tool_call("pay", small, "c1"),
            reply.text("Paid."),
            reply.tool_call("pay", small, "c2"),
            reply.text("Paid again."),
        ],
    )
    async with loop_worker(payments.registry()) as w:
        await w.sessions.start(sid, approval_settings(scripted_llm, model, temporal_env))
        first = await w.sessions.send(sid, "pay", message_id="m1")
        no_remember = await invoke(
            temporal_env, "tool-calls", "approve", sid, "c1", "--as", "al", "--for", "60"
        )
        approved = await invoke(
            temporal_env,
            "tool-calls",
            "approve",
            sid,
            "c1",
            "--as",
            "al",
            "--remember",
            "--when",
            '{"properties": {"amount": {"maximum": 100}}}',
        )
        await w.sessions.message_result(sid, "m1")
        second = await w.sessions.send(sid, "pay again", message_id="m2")
        listed = await invoke(temporal_env, "tool-calls", "list", sid)
        listing = await w.sessions.tool_approvals(sid)
        withdrawn = await invoke(temporal_env, "tool-calls", "withdraw", sid, "c1", "--as", "al")
        after = await w.sessions.tool_approvals(sid)
    assert first.status == "awaiting_approval"
    assert (
        no_remember.exit_code == 2 and "--for and --when go with --remember" in no_remember.output
    )
    assert approved.exit_code == 0 and "c1 approved by al" in approved.stdout
    assert second.status == "completed" and second.reply == "Paid again."
    [policy] = listing.policies
    assert policy.approved_by == "al" and policy.condition is not None
    assert len(payments.made) == 2
    assert "standing approval: pay by al when the arguments match a condition" in listed.stdout
    assert withdrawn.exit_code == 0, withdrawn.output
    assert "standing approval of pay (set on c1) withdrawn by al" in withdrawn.stdout
    assert after.policies == []
