"""Tool approvals, the decisions: a held call runs once when confirmed, and the model
reads what was decided (result, rejection, expiry, edited arguments); bad decisions are
refused and audited. Which calls are held, and how a hold lives: test_tool_approval_holds."""

from __future__ import annotations

import asyncio

import pytest
import pytest_asyncio
from temporalio.client import WorkflowUpdateFailedError

from durable_loop.core.approvals import ToolCallDecision
from durable_loop.core.config import RuntimeConfig
from durable_loop.store import StoreConfig
from durable_loop.store.workspace import open_workspace_store
from durable_loop.testing import reply
from durable_loop.testing.pytest_plugin import running_test_environment
from tests.workflows.approval_kit import Payments, hour, payload_text
from tests.workflows.held_payment_kit import PAY, held_payment, pay_then, tool_audit
from tests.workflows.proposal_kit import activity_names, eventually, tool_envelopes
from tests.workflows.test_session import wait_until


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def temporal_env():
    """A server of this module's own, so simulated hours skip only these tests' timers."""
    async with running_test_environment() as env:
        yield env


@pytest_asyncio.fixture
async def ws(store_url):
    store = open_workspace_store(StoreConfig(url=store_url))
    yield store
    await store.close()


async def test_confirm_after_three_hours_runs_once_and_audits(
    loop_worker, scripted_llm, temporal_env, ws
):
    payments = Payments()
    async with loop_worker(payments.registry()) as w:
        model, sid, first = await held_payment(w, scripted_llm, temporal_env, pay_then("Paid."))
        [pending] = first.pending_approvals
        assert (pending.call_id, pending.tool, pending.arguments) == ("c1", "pay", PAY)
        assert pending.expires_at - pending.created_at == 24 * hour(temporal_env)
        assert (await w.sessions.tool_approvals(sid)).pending == [pending]
        await temporal_env.sleep(3 * hour(temporal_env))
        assert payments.made == []
        decided = await w.sessions.confirm_tool_call(sid, "c1", "alice", comment="ok")
        final = await w.sessions.message_result(sid, first.message_id)
        histories = await w.histories(sid)
    assert (decided.status, decided.decided_by, decided.edited_fields) == ("confirmed", "alice", [])
    assert (final.status, final.reply, final.pending_approvals) == ("completed", "Paid.", [])
    assert [(t.name, t.ok, t.executed) for t in final.tool_calls] == [("pay", True, True)]
    assert [(a, to) for a, to, _ in payments.made] == [(250, "acme")]
    assert payments.made[0][2].endswith(":c1:2")
    [envelope] = tool_envelopes(scripted_llm.requests(model)[1])
    assert envelope["ok"] is True and envelope["data"] == "paid 250 to acme"
    assert tool_audit(await ws.audit(sid)) == [("confirm", "pay", "alice", "c1", "ok")]
    assert activity_names(histories).count("run_tool") == 1


async def test_rejection_by_signal_reaches_the_model(loop_worker, scripted_llm, temporal_env, ws):
    payments = Payments()
    async with loop_worker(payments.registry()) as w:
        model, sid, first = await held_payment(w, scripted_llm, temporal_env, pay_then("Not paid."))
        decision = await w.sessions.tool_calls.decision_for(
            sid, "c1", "reject", "bob", comment="wrong supplier"
        )
        await w.sessions.tool_calls.signal(sid, decision)
        final = await w.sessions.message_result(sid, first.message_id)

        async def settled() -> bool:
            described = await w.sessions.handle(sid).describe()
            return not described.raw_description.pending_activities

        # The Signal's audit activity may still be reporting: leave no activity open for a
        # worker that is gone (it would stall the test server's clock for the next test).
        await wait_until(settled)
    assert final.status == "completed" and payments.made == []
    assert [(t.name, t.executed, t.error_codes) for t in final.tool_calls] == [
        ("pay", False, ["TOOL_CALL_REJECTED"])
    ]
    [envelope] = tool_envelopes(scripted_llm.requests(model)[1])
    assert envelope["ok"] is False and envelope["errors"][0]["code"] == "TOOL_CALL_REJECTED"
    assert '"wrong supplier"' in envelope["errors"][0]["message"]
    assert tool_audit(await ws.audit(sid)) == [("reject", "pay", "bob", "c1", "wrong supplier")]


async def test_unanswered_call_expires(loop_worker, scripted_llm, temporal_env, ws):
    payments = Payments()
    async with loop_worker(payments.registry()) as w:
        model, sid, first = await held_payment(
            w,
            scripted_llm,
            temporal_env,
            pay_then("It expired."),
            ttl_hours=2,
        )
        fingerprint = first.pending_approvals[0].fingerprint
        await temporal_env.sleep(3 * hour(temporal_env))
        final = await w.sessions.message_result(sid, first.message_id)
        with pytest.raises(WorkflowUpdateFailedError) as late:
            await w.sessions.confirm_tool_call(sid, "c1", "alice", fingerprint=fingerprint)
        listing = await w.sessions.tool_approvals(sid)
    assert late.value.cause.type == "EXPIRED"  # one code for a decision after the expiry
    assert final.reply == "It expired." and payments.made == []
    [envelope] = tool_envelopes(scripted_llm.requests(model)[1])
    assert envelope["errors"][0]["code"] == "TOOL_CALL_EXPIRED"
    assert [(d.status, d.decided_by) for d in listing.decided] == [("expired", "system:expiry")]
    assert [(r.approver, r.error.code) for r in listing.refused] == [("alice", "EXPIRED")]
    assert tool_audit(await ws.audit(sid)) == [
        ("expire", "pay", "system:expiry", "c1", None),
        ("refused", "pay", "alice", "c1", None),
    ]


async def test_edited_arguments_run_and_invalid_edits_are_refused_and_audited(
    loop_worker, scripted_llm, temporal_env, ws
):
    payments = Payments()
    runtime = RuntimeConfig(max_tool_args_bytes=200)
    async with loop_worker(payments.registry()) as w:
        model, sid, first = await held_payment(
            w,
            scripted_llm,
            temporal_env,
            pay_then("Paid less."),
            runtime=runtime,
        )
        bad_edits = [
            ({"amount": "lots", "to": "acme"}, "INVALID_ARGS"),
            ({"to": "acme"}, "INVALID_ARGS"),
            ({"amount": 1, "to": "x" * 300}, "ARGUMENTS_TOO_LARGE"),
        ]
        for arguments, code in bad_edits:
            with pytest.raises(WorkflowUpdateFailedError) as refused:
                await w.sessions.confirm_tool_call(sid, "c1", "mallory", arguments=arguments)
            assert code in str(refused.value.cause)
        decided = await w.sessions.confirm_tool_call(
            sid, "c1", "alice", arguments={"amount": 90, "to": "acme"}
        )
        final = await w.sessions.message_result(sid, first.message_id)
        histories = await w.histories(sid)
    assert decided.edited_fields == ["amount"] and decided.arguments == {"amount": 90, "to": "acme"}
    assert final.status == "completed" and [(a, to) for a, to, _ in payments.made] == [(90, "acme")]
    [envelope] = tool_envelopes(scripted_llm.requests(model)[1])
    assert envelope["ok"] is True and envelope["data"] == "paid 90 to acme"
    assert envelope["warnings"] == [
        'a person (alice) changed the arguments before the call ran; it ran with {"amount":90} '
        "in place of your values"
    ]
    assert "mallory" in payload_text(histories)  # every refused decision leaves a trace
    *refusals, row = [a for a in await ws.audit(sid) if a.target == "tool"]
    assert [(r.op, r.actor, r.value["code"]) for r in refusals] == [
        ("refused", "mallory", code) for _, code in bad_edits
    ]
    assert (row.op, row.actor) == ("edit", "alice")
    assert row.value["edited_fields"] == ["amount"]


async def test_bad_decisions_are_refused_audited_and_change_nothing(
    loop_worker, scripted_llm, temporal_env, ws
):
    payments = Payments()
    async with loop_worker(payments.registry()) as w:
        _, sid, first = await held_payment(w, scripted_llm, temporal_env, pay_then("Paid."))
        good = ToolCallDecision(
            call_id="c1",
            verdict="confirm",
            approver="alice",
            fingerprint=first.pending_approvals[0].fingerprint,
        )
        bad = [
            (
                good.model_copy(update={"call_id": "nope", "approver": "mallory"}),
                "UNKNOWN_TOOL_CALL",
            ),
            (
                good.model_copy(update={"session_id": "other", "approver": "mallory"}),
                "UNKNOWN_TOOL_CALL",
            ),
            (good.model_copy(update={"approver": "  "}), "INVALID_DECISION"),
            (
                good.model_copy(update={"approver": "mallory", "fingerprint": "f" * 64}),
                "FINGERPRINT_MISMATCH",
            ),
            (
                good.model_copy(update={"approver": "mallory", "fingerprint": None}),
                "FINGERPRINT_MISMATCH",
            ),
            (
                good.model_copy(
                    update={"approver": "mallory", "verdict": "reject", "arguments": PAY}
                ),
                "INVALID_DECISION",
            ),
        ]
        for decision, code in bad:
            with pytest.raises(WorkflowUpdateFailedError) as refused:
                await w.sessions.decide_tool_call(sid, decision)
            assert code in str(refused.value.cause), decision
        with pytest.raises(WorkflowUpdateFailedError) as unknown_message:
            await w.sessions.message_result(sid, "no-such-message")
        still = await w.sessions.tool_approvals(sid)
        await w.sessions.decide_tool_call(sid, good)
        with pytest.raises(WorkflowUpdateFailedError) as twice:
            await w.sessions.decide_tool_call(sid, good)
        final = await w.sessions.message_result(sid, first.message_id)
        histories = await w.histories(sid)
    assert "UNKNOWN_MESSAGE" in str(unknown_message.value.cause)
    assert "ALREADY_DECIDED" in str(twice.value.cause)
    assert [p.call_id for p in still.pending] == ["c1"] and still.decided == []
    assert [r.error.code for r in still.refused] == [code for _, code in bad]
    assert final.status == "completed" and len(payments.made) == 1
    assert '"approver":"alice"' in payload_text(histories)
    audit = [(a.op, a.value.get("code")) for a in await ws.audit(sid) if a.target == "tool"]
    assert audit == [
        *[("refused", code) for _, code in bad],
        ("confirm", None),
        ("refused", "ALREADY_DECIDED"),
    ]


async def test_refused_signal_is_visible_in_query_and_audit(
    loop_worker, scripted_llm, temporal_env, ws
):
    payments = Payments()
    async with loop_worker(payments.registry()) as w:
        _, sid, _ = await held_payment(w, scripted_llm, temporal_env, pay_then("Paid."))
        forged = ToolCallDecision(
            call_id="c1", verdict="confirm", approver="mallory", fingerprint="f" * 64
        )
        await w.sessions.tool_calls.signal(sid, forged)

        async def refused():
            return (await w.sessions.tool_approvals(sid)).refused

        async def audited():
            return tool_audit(await ws.audit(sid))

        [refusal] = await eventually(refused)
        listing = await w.sessions.tool_approvals(sid)
        # the audit is an activity: read it while the worker that runs it is still up
        audit = await eventually(audited)
    assert (refusal.id, refusal.approver, refusal.error.code) == (
        "c1",
        "mallory",
        "FINGERPRINT_MISMATCH",
    )
    assert [p.call_id for p in listing.pending] == ["c1"] and payments.made == []
    assert audit == [("refused", "pay", "mallory", "c1", None)]


async def test_closing_the_session_ends_a_waiting_message(
    loop_worker, scripted_llm, temporal_env, ws
):
    payments = Payments()
    async with loop_worker(payments.registry()) as w:
        _, sid, first = await held_payment(
            w, scripted_llm, temporal_env, pay_then("Closed without paying.")
        )
        waiting = asyncio.ensure_future(w.sessions.message_result(sid, first.message_id))
        await w.sessions.close(sid)
        end = await w.sessions.handle(sid).result()
        final = await asyncio.wait_for(waiting, 30)
    assert end["messages_done"] == 1 and payments.made == []
    assert (final.reply, final.tool_calls[0].error_codes) == (
        "Closed without paying.",
        ["TOOL_CALL_EXPIRED"],
    )
    assert tool_audit(await ws.audit(sid)) == [
        ("expire", "pay", "system:close", "c1", "the session closed")
    ]


async def test_an_edited_result_never_answers_the_models_own_arguments(
    loop_worker, scripted_llm, temporal_env
):
    payments = Payments()
    steps = [reply.tool_call("pay", PAY, "c1"), reply.tool_call("pay", PAY, "c2"), reply.text("ok")]
    async with loop_worker(payments.registry()) as w:
        _, sid, first = await held_payment(w, scripted_llm, temporal_env, steps)
        await w.sessions.confirm_tool_call(
            sid, "c1", "alice", arguments={"amount": 90, "to": "acme"}
        )

        async def held_again():
            return [p.call_id for p in (await w.sessions.tool_approvals(sid)).pending]

        assert await eventually(held_again) == ["c2"]
        await w.sessions.reject_tool_call(sid, "c2", "alice", comment="90 was enough")
        final = await w.sessions.message_result(sid, first.message_id)
    assert [(t.call_id, t.reused, t.error_codes) for t in final.tool_calls] == [
        ("c1", False, []),
        ("c2", False, ["TOOL_CALL_REJECTED"]),
    ]
    assert [(a, to) for a, to, _ in payments.made] == [(90, "acme")]
