"""What people and the session did besides the turns, as typed trace entries.

Each Update, Signal and decision the session's history records becomes one entry of its
kind: a decision on a held tool call, a decision on a fact proposal, a budget change, a
model switch, a cancel, a refusal, or (for an Update this version does not know) an
unknown Update shown by its name. Pure models.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, Field, JsonValue

from durable_loop.core.approval_models import Remember
from durable_loop.core.budget import SessionBudget
from durable_loop.core.contracts import RunStatus
from durable_loop.core.errors import CodedError
from durable_loop.core.proposals import Settled

Via = Literal["update", "signal", "timer", "session"]
"""How it reached the session: an Update, a Signal, an expiry timer, or the session itself
(closing, a parent cancelling its sub-agent)."""

ToolCallOutcome = Literal[
    "approved", "approved_with_edits", "rejected", "expired", "happened", "run_again", "given_up"
]
"""The last three: a person's answers on a call in doubt (see docs/approvals.md)."""


class EntryBase(BaseModel):
    via: Via
    name: str = Field(default="", description="The Update or Signal name (empty for a timer)")
    at: datetime | None = Field(default=None, description="When history recorded it")
    run_index: int = 0
    event_id: int = Field(default=0, description="Its event in that run's history")
    message_id: str | None = Field(
        default=None, description="The message it concerns (a held call's, a cancelled one)"
    )
    message: int | None = Field(
        default=None, description="Index in Trace.by_message of the message it happened in"
    )
    after_message: int | None = Field(
        default=None,
        description="Outside any message: index in Trace.by_message of the message before it "
        "(None: before the first)",
    )
    after_turn: int | None = Field(
        default=None, description="The session turn it came after (None: before the first)"
    )


class ToolCallDecisionEntry(EntryBase):
    """A person's decision on a held tool call, or its expiry."""

    kind: Literal["tool_call_decision"] = "tool_call_decision"
    call_id: str
    tool: str = ""
    original_name: str | None = Field(
        default=None, description="The tool's own name when ``tool`` is a mapping of it"
    )
    outcome: ToolCallOutcome | None = Field(
        description="None: sent by Signal and not settled here (e.g. passed to a sub-agent)"
    )
    by: str
    comment: str | None = None
    edited_fields: list[str] = Field(default_factory=list)
    arguments: dict[str, JsonValue] | None = Field(
        default=None, description="The edited arguments the call ran with"
    )
    remembered: Remember | None = Field(
        default=None, description="The standing approval of the tool this decision also set"
    )
    standing: str | None = Field(
        default=None,
        description="Settled by a standing approval: the call whose approval set it",
    )
    sub_agent_session: str | None = Field(
        default=None, description="The call was a sub-agent's: its session"
    )


class ProposalDecisionEntry(EntryBase):
    """A person's decision on a fact proposal, or its expiry."""

    kind: Literal["proposal_decision"] = "proposal_decision"
    proposal_id: str
    verdict: Literal["approve", "reject", "expire"]
    status: Settled | None = Field(description="How it settled; None while it settles")
    by: str
    comment: str | None = None
    facts_version: int | None = None
    error: CodedError | None = None


class BudgetChangeEntry(EntryBase):
    kind: Literal["budget_change"] = "budget_change"
    by: str
    previous: SessionBudget | None = None
    budget: SessionBudget | None = Field(default=None, description="None: still applying")
    used_tokens: int | None = None
    comment: str | None = None


class ModelSwitchEntry(EntryBase):
    kind: Literal["model_switch"] = "model_switch"
    previous_model: str | None = None
    model: str
    fallback_models: list[str] = Field(default_factory=list)


class CancelEntry(EntryBase):
    kind: Literal["cancel"] = "cancel"
    reason: str
    status: RunStatus | None = Field(
        default=None, description="The cancelled message's status (an Update answers it)"
    )


class CloseEntry(EntryBase):
    kind: Literal["close"] = "close"
    reason: str


class RefusalEntry(EntryBase):
    """A request the session refused: a failed Update, or a refused Signal decision (an
    Update its validator refused never enters history; its caller got the code)."""

    kind: Literal["refusal"] = "refusal"
    target: str | None = Field(default=None, description="The call, proposal or message named")
    by: str | None = None
    error: CodedError


class UnknownUpdateEntry(EntryBase):
    """An Update this version of the trace cannot read: a name it does not know (a newer
    worker's), or (``unreadable``) payloads of another shape. Shown by its name."""

    kind: Literal["unknown_update"] = "unknown_update"
    update_id: str = ""
    completed: bool = False
    unreadable: bool = Field(default=False, description="A known name, payloads not readable")
    error: CodedError | None = None


TraceEntry = Annotated[
    ToolCallDecisionEntry
    | ProposalDecisionEntry
    | BudgetChangeEntry
    | ModelSwitchEntry
    | CancelEntry
    | CloseEntry
    | RefusalEntry
    | UnknownUpdateEntry,
    Field(discriminator="kind"),
]
