"""Proposals that wait for a person: the typed surface of human confirmation.

A tool (e.g. ``facts_propose``) reports a :class:`ProposalNotice` through
``ToolRunOutput.proposal``; the session workflow keeps it pending until a person decides
(:class:`ProposalDecision`, by Signal or Update) or it expires, then settles it through an
idempotent activity keyed by the proposal id. Pure models: importable in the sandbox.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field, JsonValue

from durable_loop.core.errors import CodedError

SIGNAL_DECIDE = "proposal_decision"
UPDATE_DECIDE = "decide_proposal"
QUERY_PROPOSALS = "proposals"
FACTS_COMMIT = "facts_commit"
"""Activity name. Never a tool: the model cannot list, call or reach it."""
PROPOSAL_CLOSE = "proposal_close"

NEVER_MODEL_FACING = frozenset({"facts_commit"})
"""Tool names no registry accepts: these actions run only from a human decision."""

Verdict = Literal["confirm", "reject"]
SettleVerdict = Literal["confirm", "reject", "expire"]
Settled = Literal["committed", "rejected", "expired", "conflict", "failed"]


class ProposedChange(BaseModel):
    """The content a person decides on; every proposal model below carries it."""

    proposal_id: str
    workspace_id: str
    changes: list[dict[str, JsonValue]]
    fingerprint: str = Field(description="sha256 of the exact proposed content")
    paths: list[str] = Field(default_factory=list)
    summary: str | None = None


class ProposalNotice(ProposedChange):
    """What a tool activity tells the workflow about a change set it proposed."""

    base_version: int = Field(default=0, description="Workspace version it was proposed at")


class PendingProposal(ProposedChange):
    """A proposal waiting in the session workflow for a person's decision."""

    proposed_by: str = "model"
    session_id: str
    turn: int
    call_id: str
    created_at: datetime
    expires_at: datetime
    deciding: bool = Field(default=False, description="A decision is being settled right now")


class ProposalDecision(BaseModel):
    """A person's decision. ``fingerprint`` binds a confirmation to the content they saw."""

    proposal_id: str
    verdict: Verdict
    approver: str
    fingerprint: str | None = None
    comment: str | None = None


class DecisionResult(BaseModel):
    proposal_id: str
    status: Settled
    decided_by: str
    comment: str | None = None
    facts_version: int | None = None
    error: CodedError | None = None
    decided_at: datetime


class ProposalList(BaseModel):
    pending: list[PendingProposal] = Field(default_factory=list)
    decided: list[DecisionResult] = Field(default_factory=list)


class ProposalBookState(BaseModel):
    """Carried across continue-as-new: open proposals, recent outcomes, untold outcomes."""

    pending: list[PendingProposal] = Field(default_factory=list)
    decided: list[DecisionResult] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class SettleInput(BaseModel):
    proposal_id: str
    workspace_id: str
    fingerprint: str
    verdict: SettleVerdict
    actor: str
    comment: str | None = None
    session_id: str


class SettleOutput(BaseModel):
    proposal_id: str
    status: Settled
    facts_version: int | None = None
    error: CodedError | None = None
    already_settled: bool = Field(default=False, description="A retry found it settled")
