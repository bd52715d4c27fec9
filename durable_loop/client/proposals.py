"""Deciding proposals from outside the workflow: list, approve or reject (Query/Update/Signal)."""

from __future__ import annotations

from temporalio.client import Client, WorkflowHandle

from durable_loop.core import names
from durable_loop.core.errors import DurableLoopError, ErrorCode
from durable_loop.core.proposals import (
    QUERY_PROPOSALS,
    SIGNAL_DECIDE,
    UPDATE_DECIDE,
    DecisionResult,
    PendingProposal,
    ProposalDecision,
    ProposalList,
    Verdict,
    settled_phrase,
    stored_verdict,
)


class ProposalNotPending(DurableLoopError, LookupError):
    """The proposal is not pending (``UNKNOWN_PROPOSAL`` or ``ALREADY_DECIDED``)."""

    code: ErrorCode


class ProposalClient:
    def __init__(self, client: Client) -> None:
        self.client = client

    def handle(self, session_id: str) -> WorkflowHandle:
        return self.client.get_workflow_handle(names.session_workflow_id(session_id))

    async def proposals(self, session_id: str) -> ProposalList:
        return await self.handle(session_id).query(QUERY_PROPOSALS, result_type=ProposalList)

    async def pending(
        self, session_id: str, proposal_id: str, *, listing: ProposalList | None = None
    ) -> PendingProposal:
        """The pending proposal, from ``listing`` when the caller has just read it."""
        listing = listing or await self.proposals(session_id)
        for proposal in listing.pending:
            if proposal.proposal_id == proposal_id:
                return proposal
        decided = {d.proposal_id: d.status for d in listing.decided}
        if proposal_id in decided:
            raise ProposalNotPending(
                ErrorCode.ALREADY_DECIDED,
                f"proposal {proposal_id} {settled_phrase(decided[proposal_id], already=True)}",
            )
        raise ProposalNotPending(ErrorCode.UNKNOWN_PROPOSAL, f"no pending proposal {proposal_id!r}")

    async def decide(self, session_id: str, decision: ProposalDecision) -> DecisionResult:
        """Update: a decision the workflow refuses fails with its code (and is audited).
        ``approve`` is sent as the stored verdict ``confirm``."""
        return await self.handle(session_id).execute_update(
            UPDATE_DECIDE, _stored(decision), result_type=DecisionResult
        )

    async def signal(self, session_id: str, decision: ProposalDecision) -> None:
        """Signal: fire and forget; an invalid decision is ignored by the workflow."""
        await self.handle(session_id).signal(SIGNAL_DECIDE, _stored(decision))

    async def decision_for(
        self,
        session_id: str,
        proposal_id: str,
        verdict: Verdict,
        approver: str,
        comment: str | None = None,
        *,
        listing: ProposalList | None = None,
    ) -> ProposalDecision:
        """A decision bound to the fingerprint of the content pending right now (in
        ``listing``, when the caller has just read it)."""
        proposal = await self.pending(session_id, proposal_id, listing=listing)
        return ProposalDecision(
            proposal_id=proposal_id,
            verdict=verdict,
            approver=approver,
            fingerprint=proposal.fingerprint,
            comment=comment,
        )


def _stored(decision: ProposalDecision) -> ProposalDecision:
    verdict = stored_verdict(decision.verdict)
    if verdict == decision.verdict:
        return decision
    return decision.model_copy(update={"verdict": verdict})
