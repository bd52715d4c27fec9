"""Typed inputs and outputs of the session workflow, its handlers and its activities.

Every model here crosses a Temporal boundary, so it holds only what history should hold:
references, sizes, codes and short previews, never the transcript itself.
"""

from __future__ import annotations

from typing import Literal, TypeVar

from pydantic import BaseModel, Field, JsonValue

from durable_loop.core.approvals import ApprovalBookState, PendingToolCall
from durable_loop.core.budget import SessionBudget
from durable_loop.core.circuit import BreakerState
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.errors import CodedError
from durable_loop.core.messages import Usage
from durable_loop.core.pipeline_trace import PipelineTrace
from durable_loop.core.proposals import ProposalBookState
from durable_loop.core.shared_settings import SharedSettings
from durable_loop.core.typed_output import OutputSchema
from durable_loop.core.typed_output.parse import parse_output

T = TypeVar("T")


def is_none(value: object) -> bool:
    """Fields added for typed answers are left out of payloads while unset, so messages
    without an output schema keep the payloads (and histories) they had before."""
    return value is None


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


SESSION_TURN = "Session turn: LLM turns are numbered across all messages of the session"


class ToolOutcome(BaseModel):
    turn: int = Field(description=SESSION_TURN)
    call_id: str
    name: str
    ok: bool
    error_codes: list[str] = Field(default_factory=list)
    executed: bool = True
    reused: bool = False
    deduplicated: bool = Field(
        default=False, description="A session-wide repeat answered with the recorded result"
    )
    after_cancel: bool = Field(
        default=False, description="The call finished after its message was cancelled"
    )


class FallbackRecord(BaseModel):
    """A turn that failed on one model and was retried on the next in the chain."""

    turn: int = Field(description=SESSION_TURN)
    failed_provider: str
    failed_model: str
    error: CodedError
    next_model: str
    skipped: bool = Field(
        default=False,
        description="No attempt: the model's circuit breaker was open (error CIRCUIT_OPEN)",
    )


RunStatus = Literal["completed", "failed", "awaiting_approval", "cancelled"]
"""How a message ended: ``awaiting_approval`` is an interim answer (tool calls wait for a
person; the message resumes by itself), the other three are final."""


class RunResult(BaseModel):
    """Outcome of one user message's loop: the reply and a short run summary."""

    message_id: str
    status: RunStatus
    reply: str | None = None
    reply_truncated: bool = False
    reply_seq: int | None = None
    error: CodedError | None = None
    turns: int = Field(default=0, description="How many LLM turns this message took")
    session_turns: list[int] = Field(
        default_factory=list, description="The session turn numbers of those turns"
    )
    tool_calls: list[ToolOutcome] = Field(default_factory=list)
    ignored_tool_calls: int = 0
    usage: Usage = Usage()
    model: str | None = Field(default=None, description="The model that gave the last reply")
    fallbacks: list[FallbackRecord] = Field(default_factory=list)
    pipeline: PipelineTrace | None = Field(
        default=None, description="Router strategy: the route taken and each step's latency"
    )
    settings_not_applied: list[str] = Field(
        default_factory=list,
        description="Settings sent with this message (update-with-start) that the session, "
        "already running, did not apply: change them with switch_model or set_budget",
    )
    warnings: list[str] = Field(
        default_factory=list,
        description="What the run did not do that the reply may suggest (a tool call written "
        "as text, not executed), with the setting that would change it",
    )
    pending_approvals: list[PendingToolCall] = Field(
        default_factory=list, description="awaiting_approval: the calls that wait for a person"
    )
    recoveries: list[str] = Field(
        default_factory=list,
        description="Named recoveries this message used, in order (finalize_text_call_reply, "
        "finalize_after_repeat, call_referred_tool, call_requested_tool, "
        "shorten_oversized_arguments, repair_invalid_arguments)",
    )
    output: JsonValue = Field(
        default=None,
        exclude_if=is_none,
        description="A message sent with an output_schema: the final answer parsed as JSON "
        "and valid against the schema",
    )

    def output_as(self, output_type: type[T]) -> T:
        """The typed answer as ``output_type`` (the type whose schema was sent, e.g. a
        Pydantic model); raises ``OutputUnavailable`` (with the run's error code) when the
        message ended without one."""
        return parse_output(self.output, output_type, status=self.status, error=self.error)


class TailEntry(BaseModel):
    seq: int
    role: str
    preview: str = ""
    tool_names: list[str] = Field(default_factory=list)


class SessionStatus(BaseModel):
    session_id: str
    state: Literal["idle", "running", "awaiting_approval", "closing"]
    model: str
    messages_done: int
    turns_total: int
    queued_messages: int
    next_seq: int
    run_index: int
    usage: Usage
    last_result: RunResult | None = None
    budget: SessionBudget | None = Field(default=None, description="The budget in force")
    settings_digest: dict[str, str] = Field(
        default_factory=dict, description="Of the settings in force (core.settings_digest)"
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
