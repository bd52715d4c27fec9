"""Decisions on held tool calls in the trace: each Update and Signal is decoded by its
name and shown as what it is (approved, approved with edits, rejected, expired, refused),
under the turn it followed; a budget change stands between the messages."""

from __future__ import annotations

import pytest_asyncio

from durable_loop.client.codec import KeyRing, data_converter, new_key
from durable_loop.client.trace.entries import (
    BudgetChangeEntry,
    ProposalDecisionEntry,
    RefusalEntry,
    ToolCallDecisionEntry,
)
from durable_loop.client.trace.fetch import load_trace
from durable_loop.core.budget import SessionBudget
from durable_loop.core.proposals import ProposalDecision
from durable_loop.testing import reply
from durable_loop.testing.pytest_plugin import start_test_environment
from durable_loop.tools.workspace import workspace_tools
from tests.client.trace.kit import EDITED, PAY, decided_session, rendered
from tests.conftest import unique
from tests.workflows.approval_kit import Payments, approval_settings, hour
from tests.workflows.proposal_kit import day, decided, session_settings


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def temporal_env():
    """A server of this module's own, so simulated hours skip only these tests' timers."""
    env = await start_test_environment()
    try:
        yield env
    finally:
        await env.shutdown()


async def test_decisions_by_update_and_signal_are_entries_of_their_kind(
    loop_worker, scripted_llm, temporal_env, store_url
):
    payments = Payments()
    async with loop_worker(payments.registry()) as w:
        session = await decided_session(w, scripted_llm, temporal_env)
        trace = await load_trace(w.sessions.client, session.session_id, db_url=store_url)
    results = session.results
    assert [(a, to) for a, to, _ in payments.made] == [(200, "acme"), (250, "acme")]

    edited, refused, rejected, signalled, budget = trace.entries
    assert isinstance(edited, ToolCallDecisionEntry)
    assert (edited.via, edited.name, edited.call_id, edited.tool, edited.outcome) == (
        "update",
        "decide_tool_call",
        "c1",
        "pay",
        "approved_with_edits",
    )
    assert (edited.by, edited.comment, edited.edited_fields, edited.arguments) == (
        "alice",
        "200 will do",
        ["amount"],
        EDITED,
    )
    assert (edited.message_id, edited.message, edited.after_turn) == (results[0].message_id, 0, 1)

    assert isinstance(refused, RefusalEntry)
    assert (refused.via, refused.name, refused.target, refused.by) == (
        "signal",
        "tool_call_decision",
        "c2",
        "mallory",
    )
    assert refused.error.code == "FINGERPRINT_MISMATCH"
    assert not refused.error.message.startswith("FINGERPRINT_MISMATCH")
    assert (refused.message, refused.after_turn) == (1, 3)

    assert isinstance(rejected, ToolCallDecisionEntry)
    assert (rejected.via, rejected.call_id, rejected.outcome, rejected.by, rejected.comment) == (
        "update",
        "c2",
        "rejected",
        "bob",
        "twice is too much",
    )
    assert (rejected.message, rejected.after_turn) == (1, 3)

    assert isinstance(signalled, ToolCallDecisionEntry)
    assert (signalled.via, signalled.call_id, signalled.outcome, signalled.by) == (
        "signal",
        "c3",
        "approved",
        "carol",
    )
    assert (signalled.message, signalled.after_turn) == (2, 5)

    assert isinstance(budget, BudgetChangeEntry)
    assert (budget.via, budget.by, budget.comment) == ("update", "ops", "keep it short")
    assert budget.previous == SessionBudget(max_turns=12)
    assert budget.budget == SessionBudget(max_turns=4)
    assert budget.used_tokens == 90
    assert (budget.message, budget.after_message, budget.after_turn) == (None, 2, 6)

    # the messages agree with their results, and show their replies
    assert [(m.message_id, m.status) for m in trace.by_message] == [
        (r.message_id, r.status) for r in results
    ]
    assert [m.reply.text if m.reply else None for m in trace.by_message] == [
        "Paid 200.",
        "Not paid.",
        "Paid 250.",
        "Noted.",
    ]
    calls = [(c.call_id, c.ok, c.executed, c.error_codes) for t in trace.turns for c in t.calls]
    assert calls == [
        ("c1", True, True, []),
        ("c2", False, False, ["TOOL_CALL_REJECTED"]),
        ("c3", True, True, []),
    ]
    assert trace.usage.total_tokens == sum(r.usage.total_tokens for r in results) == 105

    text = rendered(trace)
    assert (
        'alice approved pay c1 with edits (amount) — "200 will do"; runs with {"amount": 200'
        in text
    )
    assert "refused mallory's decision on c2: FINGERPRINT_MISMATCH" in text
    assert 'bob rejected pay c2 — "twice is too much"  [update decide_tool_call]' in text
    assert "carol approved pay c3  [signal tool_call_decision]" in text
    assert "ops changed the budget: turns per message 12 → 4 (90 tokens used) — " in text
    assert "reply: Paid 250." in text
    # each entry follows the turn it came after, inside its message
    lines = text.splitlines()
    order = [
        next(i for i, line in enumerate(lines) if needle in line)
        for needle in (
            "turn 1 ",
            "alice approved",
            "turn 2 ",
            "turn 3 ",
            "refused mallory",
            "bob rejected",
            "turn 4 ",
            "reply: Not paid.",
            "carol approved",
            "reply: Paid 250.",
            "ops changed the budget",
            "user: thanks",
        )
    ]
    assert order == sorted(order)


async def test_an_expired_call_is_shown_as_expired(
    loop_worker, scripted_llm, temporal_env, store_url
):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.tool_call("pay", PAY, "c1"), reply.text("Too late.")])
    payments = Payments()
    async with loop_worker(payments.registry()) as w:
        await w.sessions.start(
            sid, approval_settings(scripted_llm, model, temporal_env, ttl_hours=1)
        )
        first = await w.sessions.send(sid, "pay acme 250")
        await temporal_env.sleep(2 * hour(temporal_env))
        final = await w.sessions.message_result(sid, first.message_id)
        trace = await load_trace(w.sessions.client, sid, db_url=store_url)
    assert final.status == "completed" and payments.made == []
    [expired] = trace.entries
    assert isinstance(expired, ToolCallDecisionEntry)
    assert (expired.via, expired.call_id, expired.tool, expired.outcome, expired.by) == (
        "timer",
        "c1",
        "pay",
        "expired",
        "system:expiry",
    )
    assert (expired.message, expired.after_turn) == (0, 1)
    [call] = trace.turns[0].calls
    assert (call.ok, call.executed, call.error_codes) == (False, False, ["TOOL_CALL_EXPIRED"])
    assert "pay c1 expired without a decision  [timer]" in rendered(trace)


def change(path: str, value: str, summary: str) -> dict:
    return {"changes": [{"op": "add", "path": path, "value": value}], "summary": summary}


async def test_proposal_decisions_by_update_signal_and_expiry(
    loop_worker, scripted_llm, temporal_env, ws, store_url
):
    model, sid = unique("m"), unique("s")
    await ws.create(sid, facts={"title": "Old", "owner": "ann"})
    scripted_llm.script(
        model,
        [
            reply.tool_calls(
                ("facts_propose", change("/title", "New", "rename"), "p1"),
                ("facts_propose", change("/owner", "bo", "new owner"), "p2"),
            ),
            reply.text("Proposed two changes."),
            reply.tool_call("facts_propose", change("/colour", "red", "colour"), "p3"),
            reply.text("Proposed a colour."),
        ],
    )
    async with loop_worker(workspace_tools(ws)) as w:
        approvals = w.sessions.approvals
        await w.sessions.start(sid, session_settings(scripted_llm, model, temporal_env))
        await w.sessions.send(sid, "rename it and give it to bo")
        ids = {p.call_id: p.proposal_id for p in (await w.sessions.proposals(sid)).pending}
        approve = await approvals.decision_for(sid, ids["p1"], "confirm", "alice", "fine")
        committed = await approvals.decide(sid, approve)
        unknown = ProposalDecision(proposal_id="nope", verdict="reject", approver="mallory")
        await approvals.signal(sid, unknown)
        reject = ProposalDecision(
            proposal_id=ids["p2"], verdict="reject", approver="bob", comment="ann stays"
        )
        await approvals.signal(sid, reject)
        await decided(approvals, sid, ids["p2"])
        await w.sessions.send(sid, "and make it red")
        [colour] = (await w.sessions.proposals(sid)).pending
        await temporal_env.sleep(8 * day(temporal_env))
        await decided(approvals, sid, colour.proposal_id)
        trace = await load_trace(w.sessions.client, sid, db_url=store_url)

    approved, refused, rejected, expired = trace.entries
    assert isinstance(approved, ProposalDecisionEntry)
    assert (approved.via, approved.name, approved.proposal_id, approved.verdict) == (
        "update",
        "decide_proposal",
        ids["p1"],
        "approve",
    )
    assert (approved.status, approved.by, approved.comment) == ("committed", "alice", "fine")
    assert approved.facts_version == committed.facts_version is not None
    assert isinstance(refused, RefusalEntry)
    assert (refused.via, refused.name, refused.target, refused.by, refused.error.code) == (
        "signal",
        "proposal_decision",
        "nope",
        "mallory",
        "UNKNOWN_PROPOSAL",
    )
    assert isinstance(rejected, ProposalDecisionEntry)
    assert (rejected.via, rejected.verdict, rejected.status, rejected.by, rejected.comment) == (
        "signal",
        "reject",
        "rejected",
        "bob",
        "ann stays",
    )
    assert isinstance(expired, ProposalDecisionEntry)
    assert (expired.via, expired.proposal_id, expired.verdict, expired.status) == (
        "timer",
        colour.proposal_id,
        "expire",
        "expired",
    )
    # decided between the messages, not during one
    assert [(e.message, e.after_message) for e in trace.entries] == [
        (None, 0),
        (None, 0),
        (None, 0),
        (None, 1),
    ]
    text = rendered(trace)
    assert f'alice approved proposal {ids["p1"]}: committed (facts version 1) — "fine"' in text
    assert "refused mallory's decision on proposal nope: UNKNOWN_PROPOSAL" in text
    assert f'bob rejected proposal {ids["p2"]} — "ann stays"  [signal proposal_decision]' in text
    assert f"proposal {colour.proposal_id} expired without a decision  [timer]" in text


async def test_an_encrypted_session_traces_its_decisions_for_whoever_holds_the_keys(
    loop_worker, scripted_llm, temporal_env, store_url
):
    converter = data_converter(KeyRing.parse(new_key("trace")))
    async with loop_worker(Payments().registry(), data_converter=converter) as w:
        session = await decided_session(w, scripted_llm, temporal_env)
        trace = await load_trace(w.sessions.client, session.session_id, db_url=store_url)
    assert [(e.kind, e.via) for e in trace.entries] == [
        ("tool_call_decision", "update"),
        ("refusal", "signal"),
        ("tool_call_decision", "update"),
        ("tool_call_decision", "signal"),
        ("budget_change", "update"),
    ]
    edited = trace.entries[0]
    assert isinstance(edited, ToolCallDecisionEntry) and edited.arguments == EDITED
    assert [m.status for m in trace.by_message] == [r.status for r in session.results]
