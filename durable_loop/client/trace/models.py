"""Typed inputs (decoded history) and output (the trace) of the trace builder."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from durable_loop.core.contracts import (
    LlmTurnInput,
    LlmTurnOutput,
    RunResult,
    ToolRunInput,
    ToolRunOutput,
)
from durable_loop.core.errors import CodedError
from durable_loop.core.messages import Usage

# ---------------------------------------------------------------- decoded history


class ActivityOutcome(BaseModel):
    """How a scheduled activity ended: ``output`` on success, ``failure`` on failure,
    neither while it is still scheduled or retrying."""

    attempt: int = 1
    failure: CodedError | None = None
    scheduled_event_id: int = 0


class LlmCall(ActivityOutcome):
    input: LlmTurnInput
    output: LlmTurnOutput | None = None


class ToolRun(ActivityOutcome):
    input: ToolRunInput
    output: ToolRunOutput | None = None


class DecodedRun(BaseModel):
    """One run of a session workflow (one link of the continue-as-new chain)."""

    run_index: int
    run_id: str
    event_count: int
    history_bytes: int
    continued_as_new: bool = False
    llm_calls: list[LlmCall] = Field(default_factory=list)
    tool_runs: list[ToolRun] = Field(default_factory=list)
    results: list[RunResult] = Field(default_factory=list)


# ---------------------------------------------------------------- the trace

CallSource = Literal["history", "store", "unknown"]


class CallRow(BaseModel):
    call_id: str
    name: str
    ok: bool | None = Field(description="None when no result was found")
    error_codes: list[str] = Field(default_factory=list)
    executed: bool = False
    reused: bool = False
    duration_ms: int | None = None
    result_seq: int | None = None
    source: CallSource = "unknown"


class TurnRow(BaseModel):
    turn: int
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
    warnings: list[str] = Field(default_factory=list)


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
    usage: Usage = Usage()
    ui_url: str | None = None

    @property
    def total_tokens(self) -> int:
        return self.usage.total_tokens
