"""The model catalog: what is known about a model's tool calling, per provider.

Each entry records the provider (adapter name), tags, a recommended sampling profile,
the workarounds (preset names) and recoveries (names in core/recoveries), both applied
by :func:`presets.for_model`, and whether tool
calling is reliable enough for ``tool_use_mode=enforced``. The OpenRouter rows come from
a 10-trial evaluation snapshot (tool scenarios: reliable at >= 97%); the local rows from
runs of the packaged Qwen2.5-Coder models (one call per reply, repeats a call after its
result unless tools are left out).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator

from durable_loop.core.config import SessionSettings, ToolUseMode
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.errors import ConfigError
from durable_loop.core.recoveries import REGISTRY

OPENAI_COMPATIBLE = frozenset({"openai", "openrouter"})


class SamplingProfile(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    options: dict[str, JsonValue] = Field(default_factory=dict)


class CatalogEntry(BaseModel):
    model_config = ConfigDict(frozen=True)

    provider: str
    model: str
    aliases: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    sampling: SamplingProfile | None = None
    workarounds: tuple[str, ...] = ()
    recoveries: tuple[str, ...] = ()
    tool_calling_reliable: bool = False
    schema_beside_tools: bool = Field(
        default=True,
        description="The server accepts a response_format json_schema in a request that also "
        "offers tools; where not, a typed answer is asked for through the final_answer tool "
        "whenever tools are offered (core.typed_output.request)",
    )
    notes: str = ""

    @field_validator("recoveries")
    @classmethod
    def _known_recoveries(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [name for name in value if name not in REGISTRY]
        if unknown:
            raise ValueError(f"unknown recoveries: {', '.join(unknown)}")
        return value

    def names(self) -> set[str]:
        return {self.model.lower(), *(a.lower() for a in self.aliases)}


QWEN_RECOMMENDED = SamplingProfile(
    name="qwen_recommended", options={"temperature": 0.7, "top_p": 0.8, "top_k": 20, "min_p": 0}
)
LOCAL_GREEDY = SamplingProfile(name="local_greedy", options={"temperature": 0, "max_tokens": 768})
LOCAL_WORKAROUNDS = (
    "openai_compatible_reliability",
    "content_tag_tool_call_fallback",
    "json_tool_call_fallback",
    "ignore_implicit_arguments",
    "string_max_length_from_args_budget",
    "router_json_mode",
)
LOCAL_RECOVERIES = (
    "retry_after_tool_error",
    "finalize_text_call_reply",
    "continue_after_repeat",
    "finalize_after_repeat",
    "call_referred_tool",
    "call_requested_tool",
    "shorten_oversized_arguments",
    "repair_invalid_arguments",
    "withhold_tools_from_conversation",
    "refuse_unasked_call",
    "ask_for_unsaid_values",
    "finalize_when_done",
)


def _or(model: str, **fields: object) -> CatalogEntry:
    return CatalogEntry.model_validate({"provider": "openrouter", "model": model, **fields})


CATALOG: tuple[CatalogEntry, ...] = (
    _or("anthropic/claude-opus-4.6", tags=("anthropic", "stable"), tool_calling_reliable=True),
    _or(
        "deepseek/deepseek-chat-v3-0324",
        tags=("deepseek",),
        workarounds=("deepseek_openrouter_compat",),
        notes="67.5% of tool scenarios",
    ),
    _or(
        "deepseek/deepseek-v3.2",
        tags=("deepseek",),
        sampling=SamplingProfile(
            name="deepseek_v3_2_local_recommended", options={"temperature": 1.0, "top_p": 0.95}
        ),
        workarounds=("deepseek_openrouter_compat",),
        notes="90%; misses on shortening oversized arguments",
    ),
    _or(
        "google/gemini-2.5-flash",
        tags=("google", "stable"),
        sampling=SamplingProfile(name="gemini_2_5_flash_creative", options={"temperature": 1.5}),
        workarounds=("gemini_openrouter_compat",),
        tool_calling_reliable=True,
    ),
    _or(
        "google/gemini-3-flash-preview",
        tags=("google",),
        workarounds=("gemini_openrouter_compat",),
        notes="95%",
    ),
    _or(
        "google/gemini-3-pro-preview",
        tags=("google",),
        workarounds=("gemini_openrouter_compat",),
        notes="75%",
    ),
    _or(
        "moonshotai/kimi-k2.5",
        tags=("moonshotai",),
        sampling=SamplingProfile(
            name="kimi_k2_5_instant", options={"temperature": 0.6, "top_p": 0.95}
        ),
        tool_calling_reliable=True,
    ),
    _or("openai/gpt-5.2", tags=("openai", "stable"), tool_calling_reliable=True),
    _or("openai/gpt-5.2-chat", tags=("openai",), tool_calling_reliable=True),
    _or(
        "qwen/qwen3-235b-a22b-2507",
        tags=("qwen", "stable"),
        workarounds=("content_tag_tool_call_fallback",),
        tool_calling_reliable=True,
    ),
    _or(
        "qwen/qwen3-30b-a3b-instruct-2507",
        tags=("qwen",),
        sampling=QWEN_RECOMMENDED,
        tool_calling_reliable=True,
    ),
    _or(
        "qwen/qwen3-next-80b-a3b-instruct",
        tags=("qwen", "stable"),
        sampling=QWEN_RECOMMENDED,
        tool_calling_reliable=True,
    ),
    _or(
        "x-ai/grok-4.1-fast",
        tags=("x-ai",),
        sampling=SamplingProfile(name="grok_default", options={"temperature": 0.3}),
        notes="timeouts dominate (p95 about 125 s)",
    ),
    _or(
        "z-ai/glm-4.7",
        tags=("z-ai",),
        workarounds=("content_tag_tool_call_fallback",),
        tool_calling_reliable=True,
    ),
    _or(
        "z-ai/glm-4.7-flash",
        tags=("z-ai",),
        sampling=SamplingProfile(
            name="glm_4_7_flash_tool_calling", options={"temperature": 0.7, "top_p": 1.0}
        ),
        workarounds=("content_tag_tool_call_fallback",),
        notes="52.5%",
    ),
    _or(
        "minimax/minimax-m2.1",
        tags=("minimax",),
        sampling=SamplingProfile(
            name="minimax_m2_1_recommended",
            options={"temperature": 1.0, "top_p": 0.95, "top_k": 40},
        ),
        workarounds=("content_tag_tool_call_fallback",),
        notes="answers without calling tools too often",
    ),
    _or(
        "minimax/minimax-m2-her",
        tags=("minimax",),
        workarounds=("tool_use_disabled",),
        notes="no tool calling",
    ),
    CatalogEntry(
        provider="anthropic",
        model="claude-opus-4-6",
        tags=("anthropic",),
        tool_calling_reliable=True,
        notes="same model as anthropic/claude-opus-4.6 on OpenRouter",
    ),
    CatalogEntry(
        provider="gemini",
        model="gemini-2.5-flash",
        tags=("google",),
        sampling=SamplingProfile(name="gemini_2_5_flash_creative", options={"temperature": 1.5}),
        tool_calling_reliable=True,
        notes="same model as google/gemini-2.5-flash on OpenRouter",
    ),
    CatalogEntry(provider="gemini", model="gemini-3-flash-preview", tags=("google",)),
    CatalogEntry(
        provider="openai",
        model="qwen2.5-coder-1.5b-instruct",
        aliases=("qwen2.5-coder-1.5b", "qwen2.5-coder-local"),
        tags=("local", "small", "qwen"),
        sampling=LOCAL_GREEDY,
        workarounds=LOCAL_WORKAROUNDS,
        recoveries=LOCAL_RECOVERIES,
        schema_beside_tools=False,  # llama.cpp: HTTP 500 "Content path must be a string"
        notes="one call per reply; repeats a call after its result while tools are sent",
    ),
    CatalogEntry(
        provider="openai",
        model="qwen2.5-coder-0.5b-instruct",
        aliases=("qwen2.5-coder-0.5b",),
        tags=("local", "small", "qwen"),
        sampling=LOCAL_GREEDY,
        workarounds=LOCAL_WORKAROUNDS,
        recoveries=LOCAL_RECOVERIES,
        schema_beside_tools=False,  # llama.cpp: HTTP 500 "Content path must be a string"
        notes="about 3x faster than 1.5B, weaker answers",
    ),
)


def _base_id(model: str) -> str:
    """``google/gemini-2.5-flash:nitro`` -> ``google/gemini-2.5-flash`` (route variants)."""
    return model.lower().split(":", 1)[0]


def lookup(provider: str, model: str) -> CatalogEntry | None:
    """The entry for ``model`` served by ``provider``; OpenAI-compatible providers
    (openai, openrouter) share entries, since one server may front the other's models."""
    wanted = {model.lower(), _base_id(model)}
    same = [e for e in CATALOG if e.provider == provider]
    family = [
        e for e in CATALOG if provider in OPENAI_COMPATIBLE and e.provider in OPENAI_COMPATIBLE
    ]
    for entries in (same, family):
        for entry in entries:
            if entry.names() & wanted:
                return entry
    return None


def schema_beside_tools(provider: str, model: str) -> bool:
    """Whether the model's server takes a response schema beside tools (unknown: yes)."""
    entry = lookup(provider, model)
    return entry is None or entry.schema_beside_tools


def with_tag(tag: str) -> list[CatalogEntry]:
    return [e for e in CATALOG if tag in e.tags]


def is_reliable(endpoint: LlmEndpoint) -> bool | None:
    """The endpoint's own mark, else the catalog's; None when nothing is known."""
    if endpoint.tool_calling_reliable is not None:
        return endpoint.tool_calling_reliable
    entry = lookup(endpoint.provider, endpoint.model)
    return entry.tool_calling_reliable if entry else None


def refuse_unreliable_enforced(settings: SessionSettings) -> None:
    """``tool_use_mode=enforced`` needs models marked tool-call reliable (by the endpoint
    or the catalog) unless ``allow_enforced_on_unreliable_model`` is set. Models nobody
    marked either way pass: mark them on the endpoint to be strict."""
    runtime = settings.runtime
    if (
        runtime.tool_use_mode is not ToolUseMode.ENFORCED
        or runtime.allow_enforced_on_unreliable_model
    ):
        return
    for endpoint in [settings.llm, *settings.fallback_llms]:
        if is_reliable(endpoint) is False:
            raise ConfigError(
                "tool_use_mode=enforced needs a tool-call reliable model, "
                f"and {endpoint.provider}/{endpoint.model} is not marked reliable; use "
                "tool_use_mode=relaxed, another model, or set "
                "allow_enforced_on_unreliable_model=true",
                show_code=True,
            )
