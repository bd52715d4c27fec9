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
    SerializeAsAny,
    field_validator,
    model_validator,
)

from durable_loop.core.approvals import ApprovalSettings
from durable_loop.core.endpoint import RESERVED_REQUEST_KEYS, LlmEndpoint
from durable_loop.core.recoveries import legacy as legacy_recoveries
from durable_loop.core.recoveries import registry as recovery_registry
from durable_loop.core.recoveries.base import RecoverySettings
from durable_loop.core.runtime_groups import HistoryConfig, RetriesConfig
from durable_loop.core.runtime_groups import lift as lift_group_keys
from durable_loop.core.sub_agent_config import DEFAULT_MAX_SUB_AGENT_DEPTH
from durable_loop.core.transforms.names import TransformsConfig, TransformSet


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
Recoveries = Annotated[
    dict[str, SerializeAsAny[RecoverySettings]], BeforeValidator(recovery_registry.enabled)
]


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
    ignore_implicit_arguments: bool = Field(
        default=False,
        description="Drop any value the model passes for a tool's implicit_args (the runtime "
        "fills them in, e.g. the session's workspace) instead of refusing the call; the "
        "result carries a warning. The schema still offers them (compare the tool transform "
        "tools_hide_implicit_arguments, which hides them).",
    )
    recoveries: Recoveries = Field(
        default_factory=recovery_registry.default_enabled,
        description="The recoveries this session uses (core/recoveries, README: Recoveries): "
        "a list of names, or a mapping name -> its settings. Default: "
        + ", ".join(recovery_registry.default_names()),
    )
    request_overrides: dict[str, JsonValue] = Field(default_factory=dict)
    max_turns: int = Field(default=12, ge=1)
    retries: RetriesConfig = Field(
        default_factory=RetriesConfig,
        description="Timeouts, retries and fallback of tools and models",
    )
    history: HistoryConfig = Field(
        default_factory=HistoryConfig,
        description="What workflow history holds, and when a session continues as new",
    )
    reply_inline_bytes: int = Field(default=16_000, ge=0)
    loop_strategy: LoopStrategy = Field(
        default=LoopStrategy.TOOL_LOOP,
        description="tool_loop: native tool calling; router: router -> executor pipeline "
        "for small-context or weak tool-calling models",
    )
    router: RouterConfig = RouterConfig()
    transforms: TransformsConfig = Field(
        default_factory=TransformsConfig,
        description="The named shape transforms per point and the provider's normalisation "
        "(docs/providers.md)",
    )
    max_session_tokens: int | None = Field(
        default=None, ge=1, description="Input + output tokens a session may spend"
    )
    max_sub_agent_depth: int = Field(
        default=DEFAULT_MAX_SUB_AGENT_DEPTH,
        ge=0,
        description="How deep sub-agents may nest: a session is depth 0, its sub-agents 1; "
        "a call that would go deeper ends with SUB_AGENT_TOO_DEEP",
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

    @model_validator(mode="before")
    @classmethod
    def _old_keys(cls, data: object) -> object:
        """The flat keys of stored histories and old settings files: recoveries
        (core/recoveries/legacy) and the grouped fields (core/runtime_groups)."""
        if not isinstance(data, dict):
            return data
        return lift_group_keys(legacy_recoveries.upgrade(data))

    def recovery(self, name: str) -> RecoverySettings | None:
        """The settings of recovery ``name`` when this config uses it, else None."""
        return self.recoveries.get(name)

    def uses(self, name: str) -> bool:
        return name in self.recoveries

    def transform_set(self) -> TransformSet:
        return self.transforms.transform_set()

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
