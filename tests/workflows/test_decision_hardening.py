"""Decisions that cannot be applied, on proposals and held tool calls alike: a refused
Signal stays visible (Query and audit log), and a stock-CLI payload with an unknown
verdict or no approver is refused with INVALID_DECISION naming what is accepted."""

from __future__ import annotations

import pytest
import pytest_asyncio
from temporalio.client import WorkflowUpdateFailedError

from durable_loop.core.approvals import UPDATE_DECIDE_TOOL_CALL
from durable_loop.core.proposals import UPDATE_DECIDE, ProposalDecision
from durable_loop.testing import reply
from durable_loop.tools.workspace import workspace_tools
from tests.client.kit import session_with_proposal, workspace_store
from tests.conftest import unique
from tests.workflows.approval_kit import Payments, approval_settings
from tests.workflows.proposal_kit import eventually


@pytest_asyncio.fixture
async def ws(store_url):
    store = workspace_store(store_url)
    yield store
    await store.close()


async def test_a_refused_proposal_signal_is_visible(loop_worker, scripted_llm, temporal_env, ws):
    async with loop_worker(workspace_tools(ws)) as w:
        _, sid, pending = await session_with_proposal(w, ws, scripted_llm, temporal_env)
        forged = ProposalDecision(
            proposal_id=pending.proposal_id,
            verdict="confirm",
            approver="mallory",
            fingerprint="f" * 64,
        )
        await w.sessions.approvals.signal(sid, forged)

        async def refused():
            return (await w.sessions.proposals(sid)).refused

        [refusal] = await eventually(refused)
        listing = await w.sessions.proposals(sid)

        async def audited():
            return [a for a in await ws.audit(sid) if a.target == "proposal" and a.op == "refused"]

        [row] = await eventually(audited)
    assert (refusal.id, refusal.approver, refusal.error.code) == (
        pending.proposal_id,
        "mallory",
        "FINGERPRINT_MISMATCH",
    )
    assert [p.proposal_id for p in listing.pending] == [pending.proposal_id]
    assert (row.actor, row.proposal_id, row.value["code"]) == (
        "mallory",
        pending.proposal_id,
        "FINGERPRINT_MISMATCH",
    )
    assert (await ws.snapshot(sid)).facts_version == 0


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"verdict": "approve"}, "verdict must be one of confirm, reject"),
        ({"approver": None}, "the approver's identity is required"),
    ],
)
async def test_stock_cli_payloads_get_invalid_decision(
    loop_worker, scripted_llm, temporal_env, ws, change, expected
):
    payments = Payments()
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model, [reply.tool_call("pay", {"amount": 1, "to": "a"}, "c1"), reply.text("ok")]
    )
    async with loop_worker(payments.registry().merged(workspace_tools(ws))) as w:
        _, psid, pending = await session_with_proposal(w, ws, scripted_llm, temporal_env)
        proposal = {
            "proposal_id": pending.proposal_id,
            "verdict": "confirm",
            "approver": "alice",
            "fingerprint": pending.fingerprint,
        }
        await w.sessions.start(sid, approval_settings(scripted_llm, model, temporal_env))
        first = await w.sessions.send(sid, "pay")
        call = {
            "call_id": "c1",
            "verdict": "confirm",
            "approver": "alice",
            "fingerprint": first.pending_approvals[0].fingerprint,
        }
        refusals = []
        for session_id, update, payload in [
            (psid, UPDATE_DECIDE, proposal),
            (sid, UPDATE_DECIDE_TOOL_CALL, call),
        ]:
            raw = {k: v for k, v in {**payload, **change}.items() if v is not None}
            with pytest.raises(WorkflowUpdateFailedError) as refused:
                await w.sessions.handle(session_id).execute_update(update, raw)
            refusals.append(str(refused.value.cause))
        histories = [*await w.histories(psid), *await w.histories(sid)]
    for text in refusals:
        assert "INVALID_DECISION" in text and expected in text
    refused_rows = [a for a in await ws.audit(psid) + await ws.audit(sid) if a.op == "refused"]
    assert sorted(r.target for r in refused_rows) == ["proposal", "tool"]
    assert all(r.value["code"] == "INVALID_DECISION" for r in refused_rows)
    assert len(histories) == 2
