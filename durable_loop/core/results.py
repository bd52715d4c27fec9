"""What a session answers: a message's :class:`RunResult` and the session's
:class:`SessionStatus`, with their parts. Apart from the workflow's inputs
(:mod:`durable_loop.core.contracts`, which imports them from here too) so that a reader of
answers, such as a CLI query, imports neither the settings, the providers nor JSON Schema.
"""

from __future__ import annotations

from typing import Literal, TypeVar

from pydantic import BaseModel, Field, JsonValue

from durable_loop.core.approval_models import PendingToolCall
from durable_loop.core.budget import SessionBudget
from durable_loop.core.errors import CodedError
from durable_loop.core.messages import Usage
from durable_loop.core.pipeline_trace import PipelineTrace

T = TypeVar("T")


def is_none(value: object) -> bool:
    """Fields added for typed answers are left out of payloads while unset, so messages
    without an output schema keep the payloads (and histories) they had before."""
    return value is None


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
        "shorten_oversized_arguments, repair_invalid_arguments, refuse_unasked_call, "
        "ask_for_unsaid_values, finalize_when_done, continue_after_repeat)",
    )
    output: JsonValue = Field(
        default=None,
        exclude_if=is_none,
        description="A message sent with an output_schema: the final answer parsed as JSON "
        "and valid against the schema",
    )
    output_corrections: int | None = Field(
        default=None,
        exclude_if=is_none,
        description="A message sent with an output_schema: how many times the answer was "
        "sent back with its validation errors (0: it fit at once)",
    )

    def output_as(self, output_type: type[T]) -> T:
        """The typed answer as ``output_type`` (the type whose schema was sent, e.g. a
        Pydantic model); raises ``OutputUnavailable`` (with the run's error code) when the
        message ended without one."""
        # imported here: only a caller of typed answers needs JSON Schema
        from durable_loop.core.typed_output.parse import parse_output

        return parse_output(self.output, output_type, status=self.status, error=self.error)


class TailEntry(BaseModel):
    seq: int
    role: str
    preview: str = ""
    tool_names: list[str] = Field(default_factory=list)


class SessionStatus(BaseModel):
    session_id: str
    state: Literal["idle", "running", "awaiting_approval", "closing", "closed"] = Field(
        description="closed: the session ended (read from its closed workflow)"
    )
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
