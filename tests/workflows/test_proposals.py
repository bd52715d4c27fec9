"""Human confirmation: the model proposes, a person commits (or rejects, or lets it expire)."""

from __future__ import annotations

import asyncio

import pytest
import pytest_asyncio
from temporalio.client import WorkflowUpdateFailedError

from durable_loop.client.proposals import ProposalClient as ApprovalClient
from durable_loop.core.config import RuntimeConfig
from durable_loop.core.proposals import ProposalDecision
from durable_loop.store import StoreConfig
from durable_loop.store.workspace import open_workspace_store
from durable_loop.store.workspace_proposals import get_proposal
from durable_loop.testing import reply
from durable_loop.testing.pytest_plugin import start_test_environment
from durable_loop.tools.workspace import workspace_tools
from tests.conftest import unique
from tests.workflows.proposal_kit import (
    activity_names,
    day,
    decided,
    first_pending,
    session_settings,
    user_texts,
)
from tests.workflows.test_session import wait_until

RENAME = {"changes": [{"op": "replace", "path": "/title", "value": "New"}], "summary": "rename"}


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def temporal_env():
    """A server of this module's own: simulated days skip only these tests' timers, and
    another test's leftovers (a workflow task no worker polls locks time skipping) cannot
    stall ``env.sleep`` here."""
    env = await start_test_environment()
    try:
        yield env
    finally:
        await env.shutdown()


@pytest_asyncio.fixture
async def ws(store_url):
    store = open_workspace_store(StoreConfig(url=store_url))
    yield store
    await store.close()


async def propose_title(w, ws, scripted_llm, env, *, extra_steps=(), **settings):
    model, sid = unique("m"), unique("s")
    await ws.create(sid, facts={"title": "Old"})
    scripted_llm.script(
        model,
        [reply.tool_call("facts_propose", RENAME), reply.text("Proposed."), *extra_steps],
    )
    await w.sessions.start(sid, session_settings(scripted_llm, model, env, **settings))
    first = await w.sessions.send(sid, "rename the title to New")
    assert first.status == "completed", first
    approvals = ApprovalClient(w.sessions.client)
    return model, sid, approvals, await first_pending(approvals, sid)


async def test_confirm_after_three_days_commits_once_and_audits(
    loop_worker, scripted_llm, temporal_env, ws
):
    async with loop_worker(workspace_tools(ws)) as w:
        model, sid, approvals, pending = await propose_title(
            w, ws, scripted_llm, temporal_env, extra_steps=[reply.text("Great.")]
        )
        assert pending.expires_at - pending.created_at == 7 * day(temporal_env)
        assert (pending.summary, pending.paths, pending.turn) == ("rename", ["/title"], 1)
        assert (await ws.snapshot(sid)).facts == {"title": "Old"}
        await temporal_env.sleep(3 * day(temporal_env))
        decision = await approvals.decision_for(
            sid, pending.proposal_id, "confirm", "alice", comment="looks right"
        )
        result = await approvals.decide(sid, decision)
        assert (result.status, result.facts_version, result.decided_by) == (
            "committed",
            1,
            "alice",
        )
        after = await w.sessions.send(sid, "thanks")
        histories = await w.histories(sid)
    assert after.status == "completed"
    snap = await ws.snapshot(sid)
    assert snap.facts == {"title": "New"} and snap.facts_version == 1
    facts_rows = [a for a in await ws.audit(sid) if a.target == "facts"]
    assert [(a.path, a.value, a.actor, a.comment, a.proposal_id, a.turn) for a in facts_rows] == [
        ("/title", "New", "alice", "looks right", pending.proposal_id, 1)
    ]
    # The note comes before the person's new message: a model answers the last one.
    *_, note, last = user_texts(scripted_llm.requests(model)[2])
    assert last == "thanks"
    assert pending.proposal_id in note and "approved by alice" in note
    assert 'Comment from alice: "looks right"' in note
    assert activity_names(histories).count("facts_commit") == 1


async def test_reject_with_comment_reaches_the_model(loop_worker, scripted_llm, temporal_env, ws):
    async with loop_worker(workspace_tools(ws)) as w:
        model, sid, approvals, pending = await propose_title(
            w, ws, scripted_llm, temporal_env, extra_steps=[reply.text("Understood.")]
        )
        await approvals.signal(
            sid,
            ProposalDecision(
                proposal_id=pending.proposal_id,
                verdict="reject",
                approver="bob",
                comment="keep the old title",
            ),
        )
        result = await decided(approvals, sid, pending.proposal_id)
        await w.sessions.send(sid, "ok?")
    assert result.status == "rejected" and result.comment == "keep the old title"
    *_, note, last = user_texts(scripted_llm.requests(model)[2])
    assert last == "ok?"
    assert "rejected by bob" in note and 'Comment from bob: "keep the old title"' in note
    assert (await ws.snapshot(sid)).facts == {"title": "Old"}
    record = await get_proposal(ws, pending.proposal_id)
    assert record is not None and (record.status, record.decided_by) == ("rejected", "bob")
    rejection = [a for a in await ws.audit(sid) if a.op == "reject"]
    assert [(a.actor, a.comment) for a in rejection] == [("bob", "keep the old title")]


async def test_proposal_expires_after_the_configured_duration(
    loop_worker, scripted_llm, temporal_env, ws
):
    async with loop_worker(workspace_tools(ws)) as w:
        model, sid, approvals, pending = await propose_title(
            w, ws, scripted_llm, temporal_env, ttl_days=2, extra_steps=[reply.text("Noted.")]
        )
        await temporal_env.sleep(day(temporal_env))
        assert [p.proposal_id for p in (await approvals.proposals(sid)).pending] == [
            pending.proposal_id
        ]
        await temporal_env.sleep(1.5 * day(temporal_env))
        result = await decided(approvals, sid, pending.proposal_id)
        late = ProposalDecision(
            proposal_id=pending.proposal_id,
            verdict="confirm",
            approver="alice",
            fingerprint=pending.fingerprint,
        )
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await approvals.decide(sid, late)
        await w.sessions.send(sid, "anything new?")
    assert (result.status, result.decided_by) == ("expired", "system:expiry")
    assert refused.value.cause.type == "EXPIRED"  # one code for a decision after the expiry
    assert "expired without a decision" in user_texts(scripted_llm.requests(model)[2])[-2]
    assert (await ws.snapshot(sid)).facts == {"title": "Old"}
    record = await get_proposal(ws, pending.proposal_id)
    assert record is not None and record.status == "expired"


async def test_wrong_fingerprint_is_refused_and_audited(
    loop_worker, scripted_llm, temporal_env, ws
):
    async with loop_worker(workspace_tools(ws)) as w:
        _, sid, approvals, pending = await propose_title(w, ws, scripted_llm, temporal_env)
        forged = ProposalDecision(
            proposal_id=pending.proposal_id,
            verdict="confirm",
            approver="mallory",
            fingerprint="f" * 64,
        )
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await approvals.decide(sid, forged)
        unknown = forged.model_copy(
            update={"proposal_id": "p-nope", "fingerprint": pending.fingerprint}
        )
        with pytest.raises(WorkflowUpdateFailedError) as missing:
            await approvals.decide(sid, unknown)
        still = (await approvals.proposals(sid)).pending
        histories = await w.histories(sid)
    assert "FINGERPRINT_MISMATCH" in str(refused.value.cause)
    assert "UNKNOWN_PROPOSAL" in str(missing.value.cause)
    assert [p.proposal_id for p in still] == [pending.proposal_id]
    audit = await ws.audit(sid)
    refused_rows = [(a.actor, a.proposal_id, a.value["code"]) for a in audit if a.op == "refused"]
    assert refused_rows == [
        ("mallory", pending.proposal_id, "FINGERPRINT_MISMATCH"),
        ("mallory", "p-nope", "UNKNOWN_PROPOSAL"),
    ]
    assert "facts_commit" not in activity_names(histories)
    assert (await ws.snapshot(sid)).facts == {"title": "Old"}


async def test_double_confirm_is_a_no_op(loop_worker, scripted_llm, temporal_env, ws):
    async with loop_worker(workspace_tools(ws)) as w:
        _, sid, approvals, pending = await propose_title(w, ws, scripted_llm, temporal_env)
        decision = await approvals.decision_for(sid, pending.proposal_id, "confirm", "alice")
        first = await approvals.decide(sid, decision)
        with pytest.raises(WorkflowUpdateFailedError) as again:
            await approvals.decide(sid, decision)
        await asyncio.gather(approvals.signal(sid, decision), approvals.signal(sid, decision))

        async def refusals_audited() -> bool:
            return len([a for a in await ws.audit(sid) if a.op == "refused"]) >= 3

        # Each refused decision is audited by an activity: wait for all, so none is left
        # scheduled for a worker that is gone (it would also stall the test server's clock).
        await wait_until(refusals_audited)
        refused = (await approvals.proposals(sid)).refused
        histories = await w.histories(sid)
    assert first.status == "committed"
    assert "ALREADY_DECIDED" in str(again.value.cause)
    assert activity_names(histories).count("facts_commit") == 1
    snap = await ws.snapshot(sid)
    assert snap.facts == {"title": "New"} and snap.facts_version == 1
    assert len([a for a in await ws.audit(sid) if a.target == "facts"]) == 1
    assert len(refused) == 3 and all(r.error.code == "ALREADY_DECIDED" for r in refused)


async def test_block_until_decision_holds_the_loop(loop_worker, scripted_llm, temporal_env, ws):
    model, sid = unique("m"), unique("s")
    await ws.create(sid, facts={"title": "Old"})
    scripted_llm.script(
        model, [reply.tool_call("facts_propose", RENAME), reply.text("It is committed.")]
    )
    async with loop_worker(workspace_tools(ws)) as w:
        settings = session_settings(scripted_llm, model, temporal_env, block=True)
        await w.sessions.start(sid, settings)
        sending = asyncio.ensure_future(w.sessions.send(sid, "rename it"))
        approvals = ApprovalClient(w.sessions.client)
        pending = await first_pending(approvals, sid)
        assert not sending.done() and len(scripted_llm.requests(model)) == 1
        status = await w.sessions.status(sid)
        assert status.state == "running"
        decision = await approvals.decision_for(sid, pending.proposal_id, "confirm", "carol")
        await approvals.decide(sid, decision)
        result = await asyncio.wait_for(sending, 30)
    assert result.status == "completed" and result.reply == "It is committed."
    second = scripted_llm.requests(model)[1]
    assert "approved by carol" in user_texts(second)[-1]
    assert second.messages[-2]["role"] == "tool"


async def test_concurrent_overlapping_proposals(loop_worker, scripted_llm, temporal_env, ws):
    model, sid = unique("m"), unique("s")
    await ws.create(sid, facts={"title": "Old", "body": "b"})
    calls = [
        ("facts_propose", {"changes": [{"op": "replace", "path": "/title", "value": "A"}]}, "c1"),
        ("facts_propose", {"changes": [{"op": "replace", "path": "/title", "value": "B"}]}, "c2"),
        ("facts_propose", {"changes": [{"op": "replace", "path": "/body", "value": "B2"}]}, "c3"),
    ]
    scripted_llm.script(
        model, [reply.tool_calls(*calls), reply.text("Three proposals."), reply.text("Ok.")]
    )
    async with loop_worker(workspace_tools(ws)) as w:
        await w.sessions.start(sid, session_settings(scripted_llm, model, temporal_env))
        await w.sessions.send(sid, "propose some titles")
        approvals = ApprovalClient(w.sessions.client)
        listing = await approvals.proposals(sid)
        by_call = {p.call_id: p for p in listing.pending}
        outcomes = []
        for call_id in ("c2", "c1", "c3"):
            decision = await approvals.decision_for(
                sid, by_call[call_id].proposal_id, "confirm", "alice"
            )
            outcomes.append((await approvals.decide(sid, decision)).status)
        await w.sessions.send(sid, "what happened?")
    assert len({p.proposal_id for p in listing.pending}) == 3
    assert outcomes == ["committed", "conflict", "committed"]
    assert (await ws.snapshot(sid)).facts == {"title": "B", "body": "B2"}
    notes = user_texts(scripted_llm.requests(model)[2])
    conflict_note = next(n for n in notes if by_call["c1"].proposal_id in n)
    assert "not committed" in conflict_note and "/title changed" in conflict_note


async def test_pending_proposal_survives_continue_as_new(
    loop_worker, scripted_llm, temporal_env, ws
):
    model, sid = unique("m"), unique("s")
    await ws.create(sid, facts={"title": "Old"})
    scripted_llm.script(
        model,
        [reply.tool_call("facts_propose", RENAME), reply.text("Proposed.")],
        then=reply.text("ok"),
    )
    runtime = RuntimeConfig(continue_as_new_after_events=200)
    async with loop_worker(workspace_tools(ws)) as w:
        await w.sessions.start(
            sid, session_settings(scripted_llm, model, temporal_env, runtime=runtime)
        )
        await w.sessions.send(sid, "rename")
        approvals = ApprovalClient(w.sessions.client)
        before = await first_pending(approvals, sid)
        for _ in range(60):
            if (await w.sessions.status(sid)).run_index > 0:
                break
            await w.sessions.send(sid, "chat")
        carried = (await approvals.proposals(sid)).pending
        await temporal_env.sleep(8 * day(temporal_env))
        result = await decided(approvals, sid, before.proposal_id)
        await w.sessions.send(sid, "news?")
        runs = len(await w.histories(sid))
    assert runs >= 2
    assert carried == [before]
    assert result.status == "expired"
    *_, note, last = user_texts(scripted_llm.requests(model)[-1])
    assert "expired without a decision" in note and last == "news?"
