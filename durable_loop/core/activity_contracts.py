"""Typed inputs and outputs of the session workflow's activities.

Each crosses a Temporal boundary, so it holds references, sizes, codes and short
previews, never the transcript itself.
"""

from __future__ import annotations

from pydantic import BaseModel, Field, JsonValue

from durable_loop.core.contracts import is_none
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.messages import Message, Usage
from durable_loop.core.proposals import ProposalNotice
from durable_loop.core.sub_agent_config import SubAgentConfig
from durable_loop.core.tools import ToolCatalog
from durable_loop.core.transforms.defaults import with_provider_normalization
from durable_loop.core.transforms.names import TransformSet
from durable_loop.core.typed_output import OutputSchema


class ListToolsInput(BaseModel):
    session_id: str


class AppendItem(BaseModel):
    """A message the workflow decided on, written by the next LLM activity at ``seq``.

    ``copy_result_from`` reuses an earlier tool result's envelope under a new call id.
    """

    seq: int
    message: Message | None = None
    copy_result_from: int | None = None
    tool_call_id: str | None = None
    tool_name: str | None = None
    dedupe: bool = Field(default=False, description="A session-wide dedup, not a repeat guard")


class TranscriptRef(BaseModel):
    session_id: str
    upto_seq: int = Field(description="Messages with seq < upto_seq form the context")


class LlmTurnInput(BaseModel):
    transcript: TranscriptRef
    turn: int
    appends: list[AppendItem] = Field(default_factory=list)
    assistant_seq: int
    endpoint: LlmEndpoint
    tool_names: list[str] = Field(
        default_factory=list,
        description="The tools the model may see: sent when send_tools; otherwise sent only, "
        "asking for no call, to providers that need tools beside earlier tool calls",
    )
    send_tools: bool = True
    tool_choice: str | dict[str, JsonValue] = "auto"
    parallel_tool_calls: bool | None = None
    request_overrides: dict[str, JsonValue] = Field(default_factory=dict)
    system_prompt: str | None = None
    inline_bytes: int = 512
    reply_inline_bytes: int = 16_000
    transforms: TransformSet = TransformSet()
    provider_normalization: bool = True
    fallback_from: list[str] = Field(
        default_factory=list, description="Models that failed this turn before this one"
    )
    fallback_reason: str | None = Field(
        default=None, description="The error code that made the previous model fail this turn"
    )
    circuit_open: list[str] = Field(
        default_factory=list,
        description="Of fallback_from, the models skipped without an attempt (circuit open)",
    )
    stream: bool = Field(default=False, description="Stream the text to the stream_chunks table")
    output_schema: OutputSchema | None = Field(
        default=None,
        exclude_if=is_none,
        description="The message's output schema: the request asks for a typed answer",
    )
    max_tool_args_bytes: int | None = Field(
        default=None,
        exclude_if=is_none,
        description="The session's argument budget, for the tool transform "
        "tools_string_max_length_from_args_budget (None: a payload from before it)",
    )
    wants_request_left: bool = Field(
        default=True,
        description="Work out the reply's request_left: asked by sessions that use "
        "finalize_when_done or continue_after_repeat (True: a payload from before the "
        "field, which always had it)",
    )

    def effective_transforms(self) -> TransformSet:
        """The session's transforms plus, unless turned off, the provider's normalisation."""
        if not self.provider_normalization:
            return self.transforms
        return with_provider_normalization(self.transforms, self.endpoint.provider)


class ToolCallSummary(BaseModel):
    index: int
    id: str
    name: str
    args_bytes: int
    args_sha256: str
    args_valid_json: bool
    args_largest: str | None = Field(
        default=None,
        description='Large arguments only: where the longest string is, "/ops/0/value (720 chars)"',
    )
    args_unsaid: list[str] = Field(
        default_factory=list,
        description="Required arguments whose values the conversation never gave, of a tool "
        "the person's messages do not name (names only; core/said_values)",
    )


class LlmTurnOutput(BaseModel):
    assistant_seq: int
    text: str | None = None
    text_bytes: int = 0
    text_truncated: bool = False
    finish_reason: str | None = None
    tool_calls: list[ToolCallSummary] = Field(default_factory=list)
    usage: Usage = Usage()
    latency_ms: int = 0
    model: str = ""
    plan_fingerprint: str = ""
    cached: bool = Field(default=False, description="Answered from the store after a retry")
    provider: str = ""
    context_dropped: int = Field(default=0, description="Messages the context window left out")
    context_first_kept_seq: int | None = None
    summary_covers_upto: int | None = None
    warnings: list[str] = Field(
        default_factory=list, description="E.g. a tool call written as text, not executed"
    )
    request_left: list[str] | None = Field(
        default=None,
        exclude_if=is_none,
        description="A reply with calls: what the person's request still asks for after the "
        "calls made for it, including these (labels, no values; core/request_left); None "
        "when not worked out",
    )


class ToolRunInput(BaseModel):
    session_id: str
    workflow_id: str
    turn: int
    assistant_seq: int
    call_index: int
    call_id: str
    name: str
    result_seq: int
    max_output_bytes: int
    timeout_s: float
    max_attempts: int
    inline_bytes: int = 512
    workspace_id: str | None = None
    ignore_implicit_args: bool = False
    arguments: dict[str, JsonValue] | None = Field(
        default=None, description="Arguments a person edited: used instead of the stored ones"
    )
    edited_fields: list[str] = Field(default_factory=list)
    approved_by: str | None = Field(default=None, description="Who approved this held call")
    approval_comment: str | None = Field(
        default=None, description="Their comment: the model reads it with the result"
    )
    doubt_to_person: bool = Field(
        default=False,
        description="An effect='once' call found in doubt is answered as such (ToolRunOutput."
        "in_doubt, nothing stored) for a person to settle; False: TOOL_CALL_IN_DOUBT is stored "
        "as its result",
    )
    rerun: int = Field(
        default=0,
        description="A person said 'run it again' to this in-doubt call this many times: this "
        "run may start the body once more despite the earlier attempt's marker",
    )


class ToolRunOutput(BaseModel):
    result_seq: int
    call_id: str
    name: str
    ok: bool
    error_codes: list[str] = Field(default_factory=list)
    output_bytes: int = 0
    preview: str = ""
    duration_ms: int = 0
    duration_us: int | None = Field(
        default=None, description="The same duration in microseconds (fast tools take 0 ms)"
    )
    cached: bool = False
    proposal: ProposalNotice | None = Field(
        default=None, description="A change this call proposed; it awaits a person's decision"
    )
    executed: bool = Field(
        default=True,
        description="The tool's code ran (False: refused before it, e.g. INVALID_ARGS)",
    )
    after_cancel: bool = Field(
        default=False, description="The tool finished after the call was cancelled"
    )
    in_doubt: bool = Field(
        default=False,
        description="An earlier attempt stopped inside an effect='once' tool and nothing "
        "settled it: no result is stored; a person answers (see doubt_to_person)",
    )


class WriteMessagesInput(BaseModel):
    session_id: str
    appends: list[AppendItem]


class ToolCatalogOutput(BaseModel):
    catalog: ToolCatalog
    sub_agents: list[SubAgentConfig] = Field(
        default_factory=list, description="The configuration of each sub-agent in the catalog"
    )


class WriteMessagesOutput(BaseModel):
    written: int


class SummarizeInput(BaseModel):
    """Summarise messages with seq < ``covers_upto`` into a message stored at ``summary_seq``."""

    session_id: str
    endpoint: LlmEndpoint
    covers_upto: int
    summary_seq: int
    max_chars: int = Field(default=2_000, ge=100, description="Longest summary kept")


class SummarizeOutput(BaseModel):
    summary_seq: int
    covers_upto: int
    summary_chars: int = 0
    usage: Usage = Usage()
    cached: bool = False
