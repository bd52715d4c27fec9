"""Inputs and outputs of the router pipeline's activities."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, JsonValue

from durable_loop.core.activity_contracts import AppendItem
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.messages import Usage
from durable_loop.core.pipeline_trace import PipelineTrace


class RepairNote(BaseModel):
    previous_output: str
    error: str


class RouterStepInput(BaseModel):
    """One router (``route``) or executor (``execute``) model call."""

    session_id: str
    kind: Literal["route", "execute"]
    user_seq: int
    turn: int
    endpoint: LlmEndpoint
    appends: list[AppendItem] = Field(default_factory=list)
    tool_names: list[str] = Field(default_factory=list, description="route: the visible tools")
    tool: str | None = Field(default=None, description="execute: the chosen tool")
    repair: RepairNote | None = None
    context_messages: int = 2
    max_output_bytes: int = 4_000
    options: dict[str, JsonValue] = Field(default_factory=dict)


class RouterStepOutput(BaseModel):
    text: str
    truncated: bool = False
    latency_ms: int = 0
    usage: Usage = Usage()


AnswerMode = Literal["summarize", "answer", "raw", "clarify"]


class RouterAnswerInput(BaseModel):
    """The message's final assistant reply, stored at ``reply_seq`` with the trace as meta.

    ``summarize``: one model pass over the tool result (no tools); ``answer``: the model
    answers directly (router chose none); ``raw``: the tool output is the reply;
    ``clarify``: the router's question is the reply.
    """

    session_id: str
    mode: AnswerMode
    user_seq: int
    reply_seq: int
    turn: int
    endpoint: LlmEndpoint
    appends: list[AppendItem] = Field(default_factory=list)
    result_seq: int | None = None
    tool: str | None = None
    clarify_question: str | None = None
    summary_input_bytes: int = 6_000
    context_messages: int = 2
    options: dict[str, JsonValue] = Field(default_factory=dict)
    reply_inline_bytes: int = 16_000
    trace: PipelineTrace = PipelineTrace()


class RouterAnswerOutput(BaseModel):
    reply_seq: int
    text: str
    text_bytes: int = 0
    truncated: bool = False
    latency_ms: int = 0
    usage: Usage = Usage()
    cached: bool = False
