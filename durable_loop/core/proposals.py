"""Proposals that wait for a person: the typed surface of human confirmation.

A tool (e.g. ``facts_propose``) reports a :class:`ProposalNotice` through
``ToolRunOutput.proposal``; the session workflow keeps it pending until a person decides
(:class:`ProposalDecision`, by Signal or Update) or it expires, then settles it through an
idempotent activity keyed by the proposal id. Pure models: importable in the sandbox.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, Field, JsonValue

from durable_loop.core.errors import CodedError

SIGNAL_DECIDE = "proposal_decision"
UPDATE_DECIDE = "decide_proposal"
QUERY_PROPOSALS = "proposals"
FACTS_COMMIT = "facts_commit"
"""Activity name. Never a tool: the model cannot list, call or reach it."""
PROPOSAL_CLOSE = "proposal_close"
RECORD_DECISION = "record_decision"
"""Activity name: one audit row of a decision on a tool call, or of a refused decision."""
VERDICTS: tuple[str, ...] = ("confirm", "reject")

NEVER_MODEL_FACING = frozenset({"facts_commit"})
"""Tool names no registry accepts: these actions run only from a human decision."""

Verdict = Literal["confirm", "reject"]
"""The verdict as stored in a decision (and so in histories): it never changes."""
VerdictWord = Literal["approve", "reject", "confirm"]
"""What a person types or sends: ``approve`` or ``reject``; ``confirm`` is accepted too."""
STORED_VERDICTS: dict[str, Verdict] = {
    "approve": "confirm",
    "confirm": "confirm",
    "reject": "reject",
}


def stored_verdict(word: str) -> str:
    """The stored verdict a person's word means (``approve`` -> ``confirm``); any other
    word is kept, for the workflow to refuse with INVALID_DECISION."""
    return STORED_VERDICTS.get(word.strip().lower(), word)


VerdictInput = Annotated[VerdictWord, AfterValidator(stored_verdict)]
"""A request field: approve, reject or confirm, validated to the stored verdict."""


def decided_word(status: str) -> str:
    """How a stored decision status reads for a person: a held call's ``confirmed`` is
    ``approved``; every other status reads as it is stored."""
    return "approved" if status == "confirmed" else status


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
    verdict: str = Field(
        description='"confirm" or "reject" (anything else: INVALID_DECISION); clients send '
        '"approve" as "confirm" (stored_verdict)'
    )
    approver: str = Field(default="", description="Required (blank: INVALID_DECISION)")
    fingerprint: str | None = None
    comment: str | None = None


class RefusedDecision(BaseModel):
    """A Signal decision the workflow refused: kept visible, never only a log line."""

    id: str = Field(description="The proposal or tool call the decision named")
    approver: str
    error: CodedError
    refused_at: datetime


AuditOp = Literal["confirm", "edit", "reject", "expire", "refused", "allow", "withdraw"]
"""``allow``: a standing approval of a tool was set (approve and remember); ``withdraw``:
one was withdrawn."""


class DecisionAudit(BaseModel):
    """One append-only audit row of a decision on a tool call, or of a refused decision."""

    workspace_id: str
    session_id: str
    target: Literal["tool", "proposal"]
    op: AuditOp
    path: str = Field(default="", description="The tool, for a tool call")
    actor: str
    actor_kind: Literal["human", "system"] = "human"
    turn: int | None = None
    call_id: str | None = None
    proposal_id: str | None = None
    comment: str | None = None
    value: JsonValue = Field(default=None, description="Fingerprint, edits or the refusal")
    key: str = Field(description="Idempotency key: a retried write records nothing twice")


class DecisionAuditOutput(BaseModel):
    written: bool


NOT_COMMITTED = {
    "conflict": "the facts changed after it was proposed (conflict)",
    "failed": "committing it failed",
}
"""Why a confirmed proposal settled without a commit, by status."""


def settled_phrase(status: str, *, already: bool = False) -> str:
    """How a settled proposal reads in a refusal: ``is committed``, ``is already
    rejected``, ``was already decided: approved, but not committed: the facts changed
    after it was proposed (conflict)`` (never ``is conflict``)."""
    again = "already " if already else ""
    if status in NOT_COMMITTED:
        return f"was {again}decided: approved, but not committed: {NOT_COMMITTED[status]}"
    return f"is {again}{status}"


class DecisionResult(BaseModel):
    proposal_id: str
    status: Settled
    decided_by: str
    comment: str | None = None
    facts_version: int | None = None
    error: CodedError | None = None
    decided_at: datetime

    def describe(self) -> str:
        """The outcome as a person reads it after the proposal id (``p1 …``) or after
        ``was``: ``committed by alice (facts version 3)``, ``rejected by bob``, ``not
        committed: approved by alice, but the facts changed after it was proposed
        (conflict)``, ``not decided before it expired``."""
        if self.status in NOT_COMMITTED:
            why = NOT_COMMITTED[self.status]
            return f"not committed: approved by {self.decided_by}, but {why}"
        if self.status == "expired":
            return "not decided before it expired"
        version = f" (facts version {self.facts_version})" if self.facts_version else ""
        return f"{self.status} by {self.decided_by}{version}"


class ProposalList(BaseModel):
    pending: list[PendingProposal] = Field(default_factory=list)
    decided: list[DecisionResult] = Field(default_factory=list)
    refused: list[RefusedDecision] = Field(
        default_factory=list, description="Signal decisions the workflow refused"
    )


class ProposalBookState(BaseModel):
    """Carried across continue-as-new: open proposals, recent outcomes, untold outcomes."""

    pending: list[PendingProposal] = Field(default_factory=list)
    decided: list[DecisionResult] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    refused: list[RefusedDecision] = Field(default_factory=list)


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
