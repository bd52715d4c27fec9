"""The ``decision-rules`` patch: a decision approves the one hold it was shown, names and
comments a reader can trust, edits in the tool's types, and the model reads what ran."""

from __future__ import annotations

import pytest
import pytest_asyncio
from temporalio.client import WorkflowUpdateFailedError

from durable_loop.core.approvals import Remember
from durable_loop.core.decider_rules import MAX_APPROVER_CHARS, MAX_COMMENT_CHARS
from durable_loop.core.errors import DurableLoopError
from durable_loop.store import StoreConfig
from durable_loop.store.workspace import open_workspace_store
from durable_loop.testing import reply
from durable_loop.testing.pytest_plugin import running_test_environment
from tests.client.trace.kit import rendered
from tests.conftest import unique
from tests.workflows.approval_kit import Payments, approval_settings, hour
from tests.workflows.proposal_kit import tool_envelopes
from tests.workflows.test_session import wait_until

PAY = {"amount": 250, "to": "acme"}


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def temporal_env():
    async with running_test_environment() as env:
        yield env


@pytest_asyncio.fixture
async def ws(store_url):
    store = open_workspace_store(StoreConfig(url=store_url))
    yield store
    await store.close()


async def held(w, scripted_llm, env, steps):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, steps)
    await w.sessions.start(sid, approval_settings(scripted_llm, model, env))
    first = await w.sessions.send(sid, "pay acme 250")
    assert first.status == "awaiting_approval", first
    return model, sid, first


async def test_a_decision_sent_again_cannot_approve_a_later_hold_of_the_same_call(
    loop_worker, scripted_llm, temporal_env
):
    """The model reuses call id c1 with the same arguments; yesterday's approving Signal,
    sent again verbatim, must not approve the new hold nobody saw."""
    payments = Payments()
    steps = [
        reply.tool_call("pay", PAY, "c1"),
        reply.text("Paid."),
        reply.tool_call("pay", PAY, "c1"),
        reply.text("Paid again."),
    ]
    async with loop_worker(payments.registry()) as w:
        _, sid, first = await held(w, scripted_llm, temporal_env, steps)
        [shown] = first.pending_approvals
        approval = shown.decision("confirm", "alice")
        await w.sessions.tool_calls.signal(sid, approval)
        assert (await w.sessions.message_result(sid, first.message_id)).reply == "Paid."
        second = await w.sessions.send(sid, "and once more?")
        [again] = second.pending_approvals
        await w.sessions.tool_calls.signal(sid, approval)

        async def refused():
            return (await w.sessions.tool_approvals(sid)).refused

        await wait_until(refused)
        listing = await w.sessions.tool_approvals(sid)
        with pytest.raises(WorkflowUpdateFailedError) as by_update:
            await w.sessions.decide_tool_call(sid, approval)
        await w.sessions.reject_tool_call(sid, "c1", "bob", fingerprint=again.fingerprint)
        final = await w.sessions.message_result(sid, second.message_id)
    assert (again.call_id, again.tool, again.arguments) == (shown.call_id, shown.tool, PAY)
    assert again.fingerprint != shown.fingerprint
    assert [p.call_id for p in listing.pending] == ["c1"]
    assert [r.error.code for r in listing.refused] == ["FINGERPRINT_MISMATCH"]
    assert by_update.value.cause.type == "FINGERPRINT_MISMATCH"
    assert final.reply == "Paid again." and len(payments.made) == 1


@pytest.mark.parametrize(
    "approver",
    [
        "alice\nFAKE-LINE: approved by root",
        "alice\r",
        "ali\x07ce",
        "ali\x00ce",
        "\u202eecila",
        "alice\u200b",
        "a" * (MAX_APPROVER_CHARS + 1),
    ],
    ids=["LF", "CR", "BEL", "NUL", "RLO", "ZWSP", "long"],
)
async def test_an_approver_name_a_reader_could_be_fooled_by_is_refused_and_audited(
    loop_worker, scripted_llm, temporal_env, ws, approver
):
    payments = Payments()
    async with loop_worker(payments.registry()) as w:
        _, sid, first = await held(w, scripted_llm, temporal_env, [reply.tool_call("pay", PAY)])
        [shown] = first.pending_approvals
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await w.sessions.decide_tool_call(sid, shown.decision("confirm", approver))
        listing = await w.sessions.tool_approvals(sid)
    assert refused.value.cause.type == "INVALID_DECISION"
    assert "approver" in str(refused.value.cause)
    assert [p.call_id for p in listing.pending] == [shown.call_id] and payments.made == []
    [row] = [a for a in await ws.audit(sid) if a.target == "tool"]
    assert (row.op, row.value["code"]) == ("refused", "INVALID_DECISION")
    assert row.actor != "alice" and "\n" not in row.actor and "\x00" not in row.actor


async def test_a_printable_name_in_any_script_is_accepted(loop_worker, scripted_llm, temporal_env):
    payments = Payments()
    steps = [reply.tool_call("pay", PAY), reply.text("Paid.")]
    async with loop_worker(payments.registry()) as w:
        _, sid, first = await held(w, scripted_llm, temporal_env, steps)
        [shown] = first.pending_approvals
        decided = await w.sessions.decide_tool_call(
            sid, shown.decision("confirm", "Zoë 東京 O'Neil")
        )
    assert decided.decided_by == "Zoë 東京 O'Neil"


async def test_a_comment_is_bounded_and_the_model_reads_an_approvers_comment(
    loop_worker, scripted_llm, temporal_env
):
    payments = Payments()
    steps = [reply.tool_call("pay", PAY), reply.text("Paid.")]
    async with loop_worker(payments.registry()) as w:
        model, sid, first = await held(w, scripted_llm, temporal_env, steps)
        [shown] = first.pending_approvals
        too_long = shown.decision("confirm", "alice", comment="x" * (MAX_COMMENT_CHARS + 1))
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await w.sessions.decide_tool_call(sid, too_long)
        ok = shown.decision("confirm", "alice", comment="only this once")
        await w.sessions.decide_tool_call(sid, ok)
        await w.sessions.message_result(sid, first.message_id)
    assert refused.value.cause.type == "INVALID_DECISION" and "comment" in str(refused.value.cause)
    [envelope] = tool_envelopes(scripted_llm.requests(model)[1])
    assert envelope["warnings"] == [
        'a person (alice) approved this call with a comment: "only this once"'
    ]


async def test_an_edit_is_checked_and_coerced_as_the_call_itself_and_the_model_reads_what_ran(
    loop_worker, scripted_llm, temporal_env
):
    payments = Payments()
    steps = [reply.tool_call("pay", PAY), reply.text("Paid less.")]
    async with loop_worker(payments.registry()) as w:
        model, sid, first = await held(w, scripted_llm, temporal_env, steps)
        [shown] = first.pending_approvals
        extra = shown.decision("confirm", "alice", arguments={**PAY, "memo": "x"})
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await w.sessions.decide_tool_call(sid, extra)
        edit = {"amount": 90.0, "to": "acme"}
        decided = await w.sessions.decide_tool_call(
            sid, shown.decision("confirm", "alice", arguments=edit, comment="half now")
        )
        final = await w.sessions.message_result(sid, first.message_id)
    assert refused.value.cause.type == "INVALID_ARGS" and "memo" in str(refused.value.cause)
    assert decided.arguments == {"amount": 90, "to": "acme"}
    assert type(decided.arguments["amount"]) is int
    assert [(a, type(a), to) for a, to, _ in payments.made] == [(90, int, "acme")]
    assert final.reply == "Paid less."
    [envelope] = tool_envelopes(scripted_llm.requests(model)[1])
    assert envelope["data"] == "paid 90 to acme"
    assert envelope["warnings"] == [
        'a person (alice) changed the arguments before the call ran; it ran with {"amount":90} '
        'in place of your values; a person (alice) approved this call with a comment: "half now"'
    ]


async def test_a_decision_too_large_for_any_session_is_refused_before_it_is_sent(
    loop_worker, scripted_llm, temporal_env
):
    payments = Payments()
    async with loop_worker(payments.registry()) as w:
        _, sid, first = await held(w, scripted_llm, temporal_env, [reply.tool_call("pay", PAY)])
        [shown] = first.pending_approvals
        huge = shown.decision("confirm", "alice", arguments={"amount": 1, "to": "x" * 10_000_000})
        with pytest.raises(DurableLoopError) as refused:
            await w.sessions.decide_tool_call(sid, huge)
        with pytest.raises(DurableLoopError) as by_signal:
            await w.sessions.tool_calls.signal(sid, huge)
        listing = await w.sessions.tool_approvals(sid)
    assert refused.value.code == by_signal.value.code == "ARGUMENTS_TOO_LARGE"
    assert [p.call_id for p in listing.pending] == [shown.call_id]


async def test_only_a_listed_approver_may_decide_a_tool_and_a_refusal_is_audited(
    loop_worker, scripted_llm, temporal_env, ws
):
    payments = Payments()
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.tool_call("pay", PAY), reply.text("Paid.")])
    settings = approval_settings(
        scripted_llm, model, temporal_env, approvers={"pa*": ["alice"], "*": []}
    )
    async with loop_worker(payments.registry()) as w:
        await w.sessions.start(sid, settings)
        first = await w.sessions.send(sid, "pay acme 250")
        [shown] = first.pending_approvals
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await w.sessions.decide_tool_call(sid, shown.decision("reject", "mallory"))
        await w.sessions.tool_calls.signal(sid, shown.decision("confirm", "mallory"))
        decided = await w.sessions.decide_tool_call(sid, shown.decision("confirm", "alice"))
        await w.sessions.message_result(sid, first.message_id)
        listing = await w.sessions.tool_approvals(sid)
    assert refused.value.cause.type == "APPROVER_NOT_ALLOWED"
    assert "'mallory' may not decide calls of 'pay'" in str(refused.value.cause)
    assert [(r.approver, r.error.code) for r in listing.refused] == [
        ("mallory", "APPROVER_NOT_ALLOWED"),
        ("mallory", "APPROVER_NOT_ALLOWED"),
    ]
    assert decided.decided_by == "alice" and len(payments.made) == 1
    audit = [(a.op, a.actor) for a in await ws.audit(sid) if a.target == "tool"]
    assert audit == [("refused", "mallory"), ("refused", "mallory"), ("confirm", "alice")]


async def test_approve_and_remember_runs_waiting_and_later_calls_the_condition_allows(
    loop_worker, scripted_llm, temporal_env, ws
):
    """One approval with ``remember`` (amounts up to 100, for an hour) lets the call already
    waiting that it allows run once, and a later call within it run without waiting; a
    call over the condition waits for a person again (its expiry is tested in
    tests/core/test_tool_policies.py)."""
    payments = Payments()
    model, sid = unique("m"), unique("s")
    small, large = {"amount": 50, "to": "acme"}, {"amount": 500, "to": "acme"}
    scripted_llm.script(
        model,
        [
            reply.tool_calls(("pay", small, "c1"), ("pay", {"amount": 60, "to": "b"}, "c2")),
            reply.text("Both paid."),
            reply.tool_call("pay", {"amount": 70, "to": "c"}, "c3"),
            reply.text("Paid without asking."),
            reply.tool_call("pay", large, "c4"),
            reply.text("Large one waited."),
        ],
    )
    async with loop_worker(payments.registry()) as w:
        await w.sessions.start(sid, approval_settings(scripted_llm, model, temporal_env))
        first = await w.sessions.send(sid, "pay two")
        held = {p.call_id: p for p in first.pending_approvals}
        bad = held["c1"].decision(
            "reject", "alice", remember=Remember(for_s=hour(temporal_env).total_seconds())
        )
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await w.sessions.decide_tool_call(sid, bad)
        remember = Remember(
            for_s=hour(temporal_env).total_seconds(),
            condition={"properties": {"amount": {"maximum": 100}}},
        )
        await w.sessions.decide_tool_call(
            sid, held["c1"].decision("confirm", "alice", remember=remember)
        )
        done = await w.sessions.message_result(sid, first.message_id)
        second = await w.sessions.send(sid, "pay c")
        third = await w.sessions.send(sid, "pay large")
        listing = await w.sessions.tool_approvals(sid)
        await w.sessions.reject_tool_call(
            sid, "c4", "alice", fingerprint=third.pending_approvals[0].fingerprint
        )
        await w.sessions.message_result(sid, third.message_id)
        trace = await w.sessions.trace(sid)
    assert refused.value.cause.type == "INVALID_DECISION"
    assert "only an approval can be remembered" in str(refused.value.cause)
    assert done.status == "completed" and done.reply == "Both paid."
    assert second.status == "completed" and second.pending_approvals == []
    assert [p.call_id for p in third.pending_approvals] == ["c4"]
    assert sorted(a for a, _, _ in payments.made) == [50, 60, 70]
    [policy] = listing.policies
    assert (policy.tool, policy.approved_by, policy.call_id) == ("pay", "alice", "c1")
    assert policy.expires_at is not None and policy.condition == remember.condition
    decided = {d.call_id: (d.status, d.decided_by) for d in listing.decided}
    assert decided["c2"] == ("confirmed", "alice")
    audit = [(a.op, a.actor, a.call_id) for a in await ws.audit(sid) if a.target == "tool"]
    decisions = {e.call_id: e for e in trace.entries if e.kind == "tool_call_decision"}
    assert decisions["c1"].remembered == remember and decisions["c1"].via == "update"
    assert (decisions["c2"].standing, decisions["c3"].standing) == ("c1", "c1")
    text = rendered(trace)
    assert "alice approved pay c2 by a standing approval (set on c1)" in text
    for_s = f"{hour(temporal_env).total_seconds():g}"
    assert f"and later calls of pay for {for_s} s when the arguments match a condition" in text
    assert audit[:5] == [
        ("refused", "alice", "c1"),
        ("confirm", "alice", "c1"),
        ("allow", "alice", "c1"),
        ("confirm", "alice", "c2"),
        ("confirm", "alice", "c3"),
    ]
