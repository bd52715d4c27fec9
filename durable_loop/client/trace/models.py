"""Typed inputs (decoded history) and output (the trace) of the trace builder."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from durable_loop.client.trace.entries import TraceEntry
from durable_loop.core.activity_contracts import (
    LlmTurnInput,
    LlmTurnOutput,
    ToolRunInput,
    ToolRunOutput,
)
from durable_loop.core.approvals import PendingToolCall
from durable_loop.core.argument_repair import RepairCallInput, RepairCallOutput
from durable_loop.core.contracts import ChildSessionResult, RunResult, RunStatus
from durable_loop.core.conversation_gate import ConversationGateInput, ConversationGateOutput
from durable_loop.core.errors import CodedError
from durable_loop.core.messages import Usage

# ---------------------------------------------------------------- decoded history


class ActivityOutcome(BaseModel):
    """How a scheduled activity ended: ``output`` on success, ``failure`` on failure,
    neither while it is still scheduled or retrying."""

    attempt: int = 1
    failure: CodedError | None = None
    scheduled_event_id: int = 0
    scheduled_ns: int = 0
    closed_ns: int | None = None

    @property
    def elapsed_ms(self) -> float | None:
        """From scheduling to the end of the last attempt (retries and back-off included)."""
        if self.closed_ns is None or not self.scheduled_ns:
            return None
        return (self.closed_ns - self.scheduled_ns) / 1e6


class LlmCall(ActivityOutcome):
    input: LlmTurnInput
    output: LlmTurnOutput | None = None


class ToolRun(ActivityOutcome):
    input: ToolRunInput
    output: ToolRunOutput | None = None


class RepairRun(ActivityOutcome):
    """A ``repair_tool_call`` activity: a named recovery re-issuing a refused call."""

    input: RepairCallInput
    output: RepairCallOutput | None = None


class GateRun(ActivityOutcome):
    """A ``conversation_gate`` activity: recovery ``withhold_tools_from_conversation``."""

    input: ConversationGateInput
    output: ConversationGateOutput | None = None


SubAgentStatus = Literal["completed", "failed", "awaiting_approval", "cancelled", "running"]


class SubAgentRun(BaseModel):
    """A sub-agent's child workflow as its parent's history sees it."""

    workflow_id: str
    ended: bool = False
    result: ChildSessionResult | None = None
    failure: CodedError | None = None
    held: list[PendingToolCall] = Field(
        default_factory=list, description="Its held calls, as it last reported them"
    )

    @property
    def session_id(self) -> str:
        return self.workflow_id.removeprefix("session-")

    @property
    def usage(self) -> Usage:
        """Its tokens (its own sub-agents' included), once it ended."""
        return self.result.carried.usage if self.result is not None else Usage()

    def task_result(self, call_id: str) -> RunResult | None:
        """The result of the task it ran for ``call_id``."""
        results = self.result.results if self.result is not None else []
        return next((r for r in reversed(results) if r.message_id == call_id), None)


class DecodedRun(BaseModel):
    """One run of a session workflow (one link of the continue-as-new chain)."""

    run_index: int
    run_id: str
    event_count: int
    history_bytes: int
    continued_as_new: bool = False
    llm_calls: list[LlmCall] = Field(default_factory=list)
    tool_runs: list[ToolRun] = Field(default_factory=list)
    repairs: list[RepairRun] = Field(default_factory=list)
    gates: list[GateRun] = Field(default_factory=list)
    results: list[RunResult] = Field(
        default_factory=list, description="What the Updates answered, in the order they did"
    )
    result_events: dict[str, int] = Field(
        default_factory=dict,
        description="message id -> the event of the first Update that gave its final result",
    )
    child_results: list[RunResult] = Field(
        default_factory=list, description="A child session's own results, once it ended"
    )
    entries: list[TraceEntry] = Field(default_factory=list)
    sub_agent_workflow_ids: list[str] = Field(
        default_factory=list, description="The sub-agents this run started, as child workflows"
    )
    sub_agents: list[SubAgentRun] = Field(default_factory=list)
    original_names: dict[str, str] = Field(
        default_factory=dict,
        description="Model-facing tool name -> the tool's own name, for the mapped names "
        "of the tool catalog the run loaded (core/tool_names.py)",
    )


# ---------------------------------------------------------------- the trace

CallSource = Literal["history", "store", "unknown"]


class BoundedText(BaseModel):
    """A text cut to a bound unless asked for whole."""

    text: str = Field(description="The text, cut when truncated")
    chars: int = Field(description="Length of the whole text")
    truncated: bool = False


class CallArguments(BoundedText):
    """A call's arguments as the model emitted them (raw JSON), read from the store."""


class CallRow(BaseModel):
    call_id: str
    name: str
    original_name: str | None = Field(
        default=None,
        description="The tool's own name when ``name`` is its provider-safe mapping "
        "(``files.read`` for ``files_read``)",
    )
    ok: bool | None = Field(description="None when no result was found")
    error_codes: list[str] = Field(default_factory=list)
    executed: bool = False
    reused: bool = False
    duration_ms: float | None = None
    result_seq: int | None = None
    source: CallSource = "unknown"
    arguments: CallArguments | None = Field(
        default=None, description="From the store; None when the trace was built without it"
    )
    sub_agent_session: str | None = Field(
        default=None, description="A sub-agent call: the child's session id (trace it too)"
    )
    sub_agent_status: SubAgentStatus | None = Field(
        default=None, description="A sub-agent call: how the child's task stands"
    )
    sub_agent_error: CodedError | None = None
    sub_agent_usage: Usage | None = Field(
        default=None, description="A sub-agent call: the child's tokens, once it ended"
    )
    sub_agent_held: list[str] = Field(
        default_factory=list, description="Calls the running child holds for a person"
    )
    repair: str | None = Field(
        default=None, description="The named recovery that re-issued the call above it"
    )


class AttemptRow(BaseModel):
    """One model's try at a turn: one scheduled LLM activity and all its retries."""

    model: str
    attempts: int = Field(description="Activity attempts (1 + retries)")
    ok: bool | None = Field(description="None while it is still running")
    elapsed_ms: float | None = Field(
        default=None, description="From scheduling to the end of the last attempt"
    )
    error: CodedError | None = None


class TurnRow(BaseModel):
    turn: int = Field(description="Session turn: numbered across all messages of the session")
    run_index: int
    assistant_seq: int
    model: str
    latency_ms: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    plan_fingerprint: str = ""
    finish_reason: str | None = None
    calls: list[CallRow] = Field(default_factory=list)
    error: CodedError | None = None
    attempt: int = 1
    cached: bool = False
    pending: bool = False
    user_text: str | None = Field(
        default=None, description="Preview of the user message this turn starts answering"
    )
    attempts: list[AttemptRow] = Field(
        default_factory=list, description="Each model tried for this turn, in order"
    )
    warnings: list[str] = Field(default_factory=list)
    gate: str | None = Field(
        default=None,
        description="What the conversation gate before this turn answered (none: the "
        "message's turns went without tools)",
    )


class MessageRow(BaseModel):
    """One user message: its result, when history holds one, and its turns."""

    message_id: str | None = None
    user_text: str | None = Field(default=None, description="None when the store was not read")
    status: RunStatus | None = Field(
        default=None, description="None while it runs, or when it was posted by Signal"
    )
    error: CodedError | None = None
    session_turns: list[int] = Field(default_factory=list)
    reply: BoundedText | None = Field(
        default=None, description="The reply (the store's text when read, else the result's)"
    )
    usage: Usage | None = Field(default=None, description="From its result (sub-agents' too)")
    output_corrections: int | None = Field(
        default=None,
        description="A typed message: how often its answer was sent back to fit the schema",
    )


class RunInfo(BaseModel):
    run_index: int
    run_id: str
    event_count: int
    history_bytes: int
    turns: int


class Trace(BaseModel):
    session_id: str
    workflow_id: str
    namespace: str
    runs: list[RunInfo]
    turns: list[TurnRow]
    messages: int = Field(description="Messages in the transcript store")
    user_messages: int
    message_results: list[RunResult] = Field(default_factory=list)
    by_message: list[MessageRow] = Field(default_factory=list)
    entries: list[TraceEntry] = Field(
        default_factory=list,
        description="Decisions, budget changes, model switches, cancels and refusals, in order",
    )
    store_read: bool = Field(default=True, description="False: history only (--no-store)")
    usage: Usage = Field(default=Usage(), description="Every turn's tokens, sub-agents' included")
    sub_agent_usage: Usage = Field(default=Usage(), description="The sub-agents' part of usage")
    ui_url: str | None = None

    @property
    def total_tokens(self) -> int:
        return self.usage.total_tokens
