"""Runtime configuration of the tool loop: one typed model, the single source of truth.

Presets may compose values for it, but the loop reads only this model.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    JsonValue,
    ValidationInfo,
    field_validator,
)

from durable_loop.core.approvals import ApprovalSettings
from durable_loop.core.circuit import CircuitBreakerSettings
from durable_loop.core.endpoint import RESERVED_REQUEST_KEYS, LlmEndpoint
from durable_loop.core.retry import RetrySettings
from durable_loop.core.sub_agent_config import DEFAULT_MAX_SUB_AGENT_DEPTH
from durable_loop.core.transforms.names import TransformSet, check_names
from durable_loop.core.typed_output.answer import DEFAULT_OUTPUT_RETRIES

DEFAULT_FIX_EMPTY_FINAL_TEXT = (
    "Your last reply was empty. Using the tool results above, write the final answer now."
)
DEFAULT_RETRY_AFTER_TOOL_ERROR_TEXT = (
    "Your {name} call failed: {error} "
    "The task is not done. Call {name} again with corrected arguments, then answer."
)
DEFAULT_UNKNOWN_TOOL_RETRY_TEXT = (
    "There is no tool named {name}. The tools you have are: {tools}. If one of them does "
    "what the user asked, call it; if the request needs no tool, answer the user directly."
)
DEFAULT_FINALIZE_TEXT_CALL_TEXT = (
    "Your last reply was a tool call written as text, not an answer for the user. No more "
    "tools will run. The tool results so far:\n{results}\n"
    "Answer the user's request now in one or two plain sentences, using these results. "
    "Do not write JSON, code or a function call."
)

DEFAULT_FINALIZE_AFTER_REPEAT_TEXT = (
    "You already made that call; its recorded result is above. No more tools will run. "
    "The tool results so far:\n{results}\n"
    "Answer the user's request now in one or two plain sentences, using these results. "
    "Do not write JSON, code or a function call."
)

DEFAULT_CALL_REFERRED_TOOL_TEXT = (
    "Do not tell the user to use {name}: you can call it yourself. Call {name} now, then "
    "answer the request with its result."
)
DEFAULT_CALL_REQUESTED_TOOL_TEXT = (
    "My request asks for {name}, and you have not called it yet. Call {name} now, then "
    "answer the request with its result."
)


class ToolUseMode(StrEnum):
    ENFORCED = "enforced"
    RELAXED = "relaxed"
    DISABLED = "disabled"


class LoopStrategy(StrEnum):
    TOOL_LOOP = "tool_loop"
    ROUTER = "router"


class ToolFailurePolicy(StrEnum):
    FATAL = "fatal"
    TOLERATED = "tolerated"


def split_names(value: object) -> object:
    """Accept a list of names or one comma-separated string."""
    if value is None:
        return None
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


NameList = Annotated[list[str], BeforeValidator(split_names)]


class RouterConfig(BaseModel):
    """Settings of the router -> executor pipeline (the ``router`` loop strategy)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str | None = Field(
        default=None,
        description="Model for the router, executor and summarizer steps "
        "(default: the session's model, on the same endpoint)",
    )
    summarize: bool = Field(
        default=True,
        description="Turn the tool output into the answer with one more model pass (no tools); "
        "off: the reply is the tool output itself",
    )
    repair_attempts: int = Field(
        default=1, ge=0, le=3, description="Retries with a prompt quoting the error"
    )
    context_messages: int = Field(
        default=2,
        ge=0,
        le=20,
        description="Earlier text messages the router sees (e.g. the question it asked)",
    )
    max_output_bytes: int = Field(
        default=4_000, ge=256, description="Longest router/executor output kept; longer fails"
    )
    summary_input_bytes: int = Field(
        default=6_000, ge=256, description="Tool output shown to the summarizer, at most"
    )
    temperature: float | None = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int | None = Field(default=512, ge=16)
    json_mode: bool = Field(
        default=False,
        description='Ask the server for JSON output (OpenAI response_format "json_object")',
    )


class RuntimeConfig(BaseModel):
    """Every knob of the tool loop, with the defaults documented in the README."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tool_use_mode: ToolUseMode = ToolUseMode.RELAXED
    tool_failure_policy: ToolFailurePolicy = ToolFailurePolicy.FATAL
    max_tool_args_bytes: int = Field(default=200_000, gt=0)
    max_tool_output_bytes: int = Field(default=200_000, gt=0)
    max_tool_calls_per_turn: int | None = Field(default=None, ge=1)
    parallel_tool_calls: bool | None = Field(
        default=None,
        description="None leaves the provider default; False also caps calls per turn at 1.",
    )
    tool_choice: str | dict[str, JsonValue] = "auto"
    tool_allowlist: NameList | None = None
    tool_denylist: NameList = Field(default_factory=list)
    fix_empty_final: bool = True
    fix_empty_final_user_text: str = DEFAULT_FIX_EMPTY_FINAL_TEXT
    fix_empty_final_disable_tools: bool = True
    ignore_implicit_arguments: bool = Field(
        default=False,
        description="Drop any value the model passes for a tool's implicit_args (the runtime "
        "fills them in, e.g. the session's workspace) instead of refusing the call; the "
        "result carries a warning. The schema still offers them (compare the tool transform "
        "tools_hide_implicit_arguments, which hides them).",
    )
    retry_after_tool_error: int = Field(
        default=0,
        ge=0,
        description="When the model answers right after a failed tool call, tell it (as a "
        "synthetic user message quoting the error) to correct the call, and ask for a tool "
        'call on that request (tool_choice "required"), at most this many times per message. '
        "Small models often read an error and declare success anyway.",
    )
    retry_after_tool_error_text: str = Field(
        default=DEFAULT_RETRY_AFTER_TOOL_ERROR_TEXT,
        description="Template with {name} (the tool) and {error} (its first error message)",
    )
    output_retries: int = Field(
        default=DEFAULT_OUTPUT_RETRIES,
        ge=0,
        exclude_if=lambda value: value == DEFAULT_OUTPUT_RETRIES,
        description="A message with an output_schema whose final answer is not valid JSON "
        "for it is sent back with the validation errors at most this many times, then "
        "fails with OUTPUT_INVALID",
    )
    repeated_call_guard: bool = True
    finalize_text_call_reply: bool = Field(
        default=False,
        description="Recovery: when the final reply is only a tool call written as text, "
        "send one request without tools quoting the recorded results and asking for an "
        "answer in plain sentences (a text call is never returned as a completed reply; "
        "without this the message fails with REPLY_NOT_AN_ANSWER)",
    )
    finalize_text_call_reply_text: str = Field(
        default=DEFAULT_FINALIZE_TEXT_CALL_TEXT,
        description="Template with {results} (one line per recorded tool result)",
    )
    finalize_after_repeat: bool = Field(
        default=False,
        description="Recovery: when the repeated-call guard answers a repeat (and withdraws "
        "the tools), the recorded result is followed at once by a request quoting the "
        "recorded results and asking for an answer in plain sentences, instead of leaving "
        "the model to write the repeated call as text first",
    )
    finalize_after_repeat_text: str = Field(
        default=DEFAULT_FINALIZE_AFTER_REPEAT_TEXT,
        description="Template with {results} (one line per recorded tool result)",
    )
    call_referred_tool: bool = Field(
        default=False,
        description="Recovery: when the final reply tells the user to use a tool (named in "
        "code form) that was not called in this message, send the model back once, asking "
        'for that call (tool_choice "required")',
    )
    call_referred_tool_text: str = Field(
        default=DEFAULT_CALL_REFERRED_TOOL_TEXT,
        description="Template with {name} (the tool the reply named)",
    )
    call_requested_tool: bool = Field(
        default=False,
        description="Recovery: when the final reply comes while an offered tool that the "
        "person's message names (not after 'do not', 'without', ...) has not been called in "
        "this message, send the model back once per such tool, asking for that call "
        '(tool_choice "required")',
    )
    call_requested_tool_text: str = Field(
        default=DEFAULT_CALL_REQUESTED_TOOL_TEXT,
        description="Template with {name} (the tool the person's message named)",
    )
    shorten_oversized_arguments: bool = Field(
        default=False,
        description="Recovery: a call refused with ARGUMENTS_TOO_LARGE gets one focused "
        "request (no tools: only the longest value, the limit and the instruction to "
        "shorten it); the call is re-issued with the shorter value, once per message",
    )
    repair_invalid_arguments: bool = Field(
        default=False,
        description="Recovery: a call that failed with INVALID_ARGS or INVALID_JSON gets one "
        "focused request (no tools: the tool's schema, the arguments and the error; output "
        "only JSON) and is re-issued with the repaired arguments, once per message",
    )
    request_overrides: dict[str, JsonValue] = Field(default_factory=dict)
    fallback_retry_count: int = Field(default=0, ge=0)
    circuit_breaker: CircuitBreakerSettings = Field(
        default_factory=CircuitBreakerSettings,
        description="Skip a model of the fallback chain that keeps failing, for a cool-down",
    )
    max_turns: int = Field(default=12, ge=1)
    tool_timeout_s: float = Field(default=60.0, gt=0)
    tool_retry: RetrySettings = RetrySettings(maximum_attempts=3)
    heartbeat_timeout_s: float | None = Field(
        default=10.0,
        gt=0,
        description="Heartbeat timeout of the LLM and tool activities: a worker that dies "
        "mid-call is noticed (and the call retried elsewhere) after this, not after the whole "
        "start-to-close timeout. None: no heartbeat timeout.",
    )
    inline_bytes: int = Field(
        default=512,
        ge=0,
        description="Largest tool-output preview or reply kept inline in workflow history.",
    )
    reply_inline_bytes: int = Field(default=16_000, ge=0)
    transcript_tail: int = Field(default=20, ge=1, le=500)
    continue_as_new_after_events: int = Field(default=8_000, ge=200)
    loop_strategy: LoopStrategy = Field(
        default=LoopStrategy.TOOL_LOOP,
        description="tool_loop: native tool calling; router: router -> executor pipeline "
        "for small-context or weak tool-calling models",
    )
    router: RouterConfig = RouterConfig()
    provider_normalization: bool = Field(
        default=True,
        description="Apply the provider's shape normalisation transforms "
        "(core/transforms/defaults.py: OpenAI-compatible reply shapes, the Gemini "
        "signature shim); False reads replies strictly.",
    )
    message_transforms: NameList = Field(default_factory=list)
    tool_transforms: NameList = Field(default_factory=list)
    response_transforms: NameList = Field(default_factory=list)
    tool_call_transforms: NameList = Field(default_factory=list)
    tool_result_transforms: NameList = Field(default_factory=list)
    max_session_tokens: int | None = Field(
        default=None, ge=1, description="Input + output tokens a session may spend"
    )
    max_sub_agent_depth: int = Field(
        default=DEFAULT_MAX_SUB_AGENT_DEPTH,
        ge=0,
        description="How deep sub-agents may nest: a session is depth 0, its sub-agents 1; "
        "a call that would go deeper ends with SUB_AGENT_TOO_DEEP",
    )
    summarize_dropped_context: bool = Field(
        default=False,
        description="When the context window leaves messages out, summarise them once "
        "(its own activity) and send the summary in their place.",
    )
    allow_enforced_on_unreliable_model: bool = Field(
        default=False,
        description="Permit tool_use_mode=enforced with a model not marked tool-call reliable",
    )
    stream_replies: bool = Field(
        default=False,
        description="Stream assistant text into the store as it is generated (OpenAI-"
        "compatible endpoints), for SessionClient.send_streaming; history is unchanged",
    )

    @field_validator(
        "message_transforms",
        "tool_transforms",
        "response_transforms",
        "tool_call_transforms",
        "tool_result_transforms",
    )
    @classmethod
    def _known_transforms(cls, value: list[str], info: ValidationInfo) -> list[str]:
        return check_names(str(info.field_name), value)

    def transform_set(self) -> TransformSet:
        return TransformSet(
            message_transforms=self.message_transforms,
            tool_transforms=self.tool_transforms,
            response_transforms=self.response_transforms,
            tool_call_transforms=self.tool_call_transforms,
            tool_result_transforms=self.tool_result_transforms,
        )

    @field_validator("request_overrides")
    @classmethod
    def _drop_reserved(cls, value: dict[str, JsonValue]) -> dict[str, JsonValue]:
        return {k: v for k, v in value.items() if k not in RESERVED_REQUEST_KEYS}

    @field_validator("tool_choice")
    @classmethod
    def _tool_choice_shape(cls, value: str | dict[str, JsonValue]) -> str | dict[str, JsonValue]:
        if isinstance(value, str) and value not in {"auto", "none", "required"}:
            raise ValueError("tool_choice must be 'auto', 'none', 'required' or an object")
        return value

    def effective_max_tool_calls_per_turn(self) -> int | None:
        if self.max_tool_calls_per_turn is not None:
            return self.max_tool_calls_per_turn
        if self.parallel_tool_calls is False:
            return 1
        return None

    def runs_tools_concurrently(self) -> bool:
        return self.parallel_tool_calls is not False


class WorkspaceSettings(BaseModel):
    """The session's workspace and how proposals to its facts wait for a person."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    workspace_id: str | None = Field(default=None, description="None: the session id")
    proposal_ttl_s: float = Field(
        default=7 * 24 * 3600.0, gt=0, description="A pending proposal expires after this"
    )
    block_until_decision: bool = Field(
        default=False,
        description="After a proposal, the loop waits for the decision before the next LLM call",
    )


class SessionSettings(BaseModel):
    """What a session is started with: its model, its loop configuration and its prompt."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    llm: LlmEndpoint
    fallback_llms: list[LlmEndpoint] = Field(
        default_factory=list,
        description="Tried in order when a turn fails on the model before them",
    )
    runtime: RuntimeConfig = RuntimeConfig()
    system_prompt: str | None = None
    title: str | None = None
    workspace: WorkspaceSettings = WorkspaceSettings()
    approvals: ApprovalSettings = ApprovalSettings()
    search_attributes: bool = Field(
        default=False,
        description="Keep the DurableLoop* search attributes current (they must be registered "
        "in the namespace; SessionClient turns this on after checking)",
    )
