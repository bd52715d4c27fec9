"""Typed inputs and outputs of the session workflow, its handlers and its activities.

Every model here crosses a Temporal boundary, so it holds only what history should hold:
references, sizes, codes and short previews, never the transcript itself. What a session
answers (``RunResult``, ``SessionStatus`` and their parts) lives in
:mod:`durable_loop.core.results` and is imported from here too.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from durable_loop.core.approvals import ApprovalBookState, PendingToolCall
from durable_loop.core.circuit import BreakerState
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.messages import Usage
from durable_loop.core.proposals import ProposalBookState
from durable_loop.core.results import (
    SESSION_TURN,
    FallbackRecord,
    RunResult,
    RunStatus,
    SessionStatus,
    TailEntry,
    ToolOutcome,
    is_none,
)
from durable_loop.core.shared_settings import SharedSettings
from durable_loop.core.typed_output import OutputSchema

__all__ = [
    "SESSION_TURN",
    "CancelMessageRequest",
    "CarriedState",
    "ChildSessionInput",
    "ChildSessionResult",
    "CloseRequest",
    "FallbackRecord",
    "ParkedMessage",
    "RunResult",
    "RunStatus",
    "SessionEnd",
    "SessionInput",
    "SessionStatus",
    "SwitchModelRequest",
    "SwitchModelResult",
    "TailEntry",
    "TailRequest",
    "ToolOutcome",
    "TranscriptTail",
    "UserMessage",
    "is_none",
]

# ---------------------------------------------------------------- workflow surface


class UserMessage(BaseModel):
    text: str = Field(min_length=1)
    message_id: str | None = Field(
        default=None, description="Idempotency key: a resent id returns the first result"
    )
    settings_digest: dict[str, str] | None = Field(
        default=None,
        description="Update-with-start: the digest of the settings sent to start the session "
        "with (core.settings_digest), to say which of them a running session did not apply",
    )
    wait_for_approval: bool = Field(
        default=False,
        description="Answer only with the final result, not with awaiting_approval while "
        "tool calls of this message wait for a person",
    )
    interrupt: bool = Field(
        default=False,
        description="Cancel the running message (if any) and run this one next",
    )
    output_schema: OutputSchema | None = Field(
        default=None,
        exclude_if=is_none,
        description="A JSON Schema the final answer must be valid against: the reply is "
        "JSON and RunResult.output holds the parsed value (error OUTPUT_INVALID otherwise)",
    )


class SwitchModelRequest(BaseModel):
    """Change the session's model (and optionally its fallback chain) from the next
    message on; ``fallback_llms=None`` keeps the current chain."""

    llm: LlmEndpoint
    fallback_llms: list[LlmEndpoint] | None = None


class SwitchModelResult(BaseModel):
    previous_model: str
    model: str
    fallback_models: list[str] = Field(default_factory=list)


class TailRequest(BaseModel):
    limit: int = Field(default=20, ge=1, le=500)


class TranscriptTail(BaseModel):
    entries: list[TailEntry]


class CloseRequest(BaseModel):
    reason: str = "closed"


class CancelMessageRequest(BaseModel):
    """Stop a message: the running one (``message_id=None``), or a running or queued one."""

    message_id: str | None = None
    reason: str = Field(default="cancelled", max_length=200)


class SessionEnd(BaseModel):
    session_id: str
    reason: str
    messages_done: int
    turns_total: int


class ParkedMessage(BaseModel):
    """A message's loop paused on held tool calls: what it resumes with once all are decided."""

    message_id: str
    result: RunResult
    held: list[PendingToolCall]
    seen_calls: dict[str, int] = Field(default_factory=dict)
    last_ok_by_tool: dict[str, bool] = Field(default_factory=dict)
    tools_off: bool = False
    finalization_used: bool = False
    error_retries_used: int = 0
    fallbacks_left: int = 0
    output_schema: OutputSchema | None = Field(default=None, exclude_if=is_none)
    output_retries_used: int | None = Field(default=None, exclude_if=is_none)


class CarriedState(BaseModel):
    """What one run hands the next across continue-as-new."""

    next_seq: int
    turn_index: int
    messages_done: int
    run_index: int
    usage: Usage
    queue: list[UserMessage] = Field(default_factory=list)
    recent_results: list[RunResult] = Field(default_factory=list)
    tail: list[TailEntry] = Field(default_factory=list)
    proposals: ProposalBookState = Field(default_factory=ProposalBookState)
    dedup: dict[str, int] = Field(
        default_factory=dict, description="name:args_sha256 -> result seq of deduplicated tools"
    )
    message_digests: dict[str, str] = Field(
        default_factory=dict,
        description="message id -> sha256 of its text, for the ids carried (a reused id "
        "with another text is refused)",
    )
    breaker: BreakerState = Field(default_factory=BreakerState)
    approvals: ApprovalBookState = Field(default_factory=ApprovalBookState)
    parked: ParkedMessage | None = Field(
        default=None, description="The message whose tool calls wait for a person"
    )


class SessionInput(BaseModel):
    session_id: str
    settings: SharedSettings
    carried: CarriedState | None = None


class ChildSessionInput(BaseModel):
    """A session run as a child of another workflow: it answers ``messages`` in order,
    then ends. ``carried`` (from an earlier child's result) continues that conversation."""

    session_id: str
    settings: SharedSettings
    messages: list[UserMessage] = Field(min_length=1)
    carried: CarriedState | None = None


class ChildSessionResult(BaseModel):
    """What a child session hands back to its parent workflow."""

    session_id: str
    results: list[RunResult] = Field(
        description="One per message answered, in order: the start messages first, then any "
        "posted to the child by signal before it ended"
    )
    end: SessionEnd
    carried: CarriedState = Field(
        description="Pass as ``carried`` to the next child to continue this conversation"
    )

    @property
    def reply(self) -> str | None:
        """The reply to the last message answered."""
        return self.results[-1].reply if self.results else None
