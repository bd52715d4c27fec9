"""Confirming or rejecting a session's proposal by its id: a :class:`ProposalClient` whose
confirmations are bound to the content the approver saw (or the content pending now)."""

from __future__ import annotations

from durable_loop.client.proposals import ProposalClient
from durable_loop.core.proposals import (
    DecisionResult,
    PendingProposal,
    ProposalDecision,
    Verdict,
)


class ProposalDecisions(ProposalClient):
    async def pending_proposals(self, session_id: str) -> list[PendingProposal]:
        """The session's pending proposals (Query)."""
        return (await self.proposals(session_id)).pending

    async def confirm(
        self,
        session_id: str,
        proposal_id: str,
        approver: str,
        *,
        comment: str | None = None,
        fingerprint: str | None = None,
    ) -> DecisionResult:
        """Commit the proposal; bound to ``fingerprint`` (the content the approver saw),
        or to the content pending right now when it is not given."""
        return await self._verdict(
            session_id, proposal_id, "confirm", approver, comment, fingerprint
        )

    async def reject(
        self,
        session_id: str,
        proposal_id: str,
        approver: str,
        *,
        comment: str | None = None,
        fingerprint: str | None = None,
    ) -> DecisionResult:
        """Reject the proposal: nothing is committed (Update; refusals as for
        :meth:`decide`)."""
        return await self._verdict(
            session_id, proposal_id, "reject", approver, comment, fingerprint
        )

    async def _verdict(
        self,
        session_id: str,
        proposal_id: str,
        verdict: Verdict,
        approver: str,
        comment: str | None,
        fingerprint: str | None,
    ) -> DecisionResult:
        if fingerprint is None and verdict == "confirm":
            decision = await self.decision_for(session_id, proposal_id, verdict, approver, comment)
        else:
            decision = ProposalDecision(
                proposal_id=proposal_id,
                verdict=verdict,
                approver=approver,
                fingerprint=fingerprint,
                comment=comment,
            )
        return await self.decide(session_id, decision)
