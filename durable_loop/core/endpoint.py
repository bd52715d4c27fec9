"""Where and how to reach a model: the endpoint, its context window and retry policy."""

from __future__ import annotations

from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator, model_validator

from durable_loop.core.providers import ADAPTERS
from durable_loop.core.retry import RetrySettings

RESERVED_REQUEST_KEYS = frozenset({"model", "messages", "tools", "tool_choice", "response_format"})


class ContextWindow(BaseModel):
    """A per-model budget for the request the LLM activity builds from the transcript.

    Without a tokenizer, ``max_tokens`` becomes characters at ``chars_per_token`` (a
    deliberately low ratio, so the estimate errs on the short side).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_chars: int | None = Field(default=None, gt=0)
    max_tokens: int | None = Field(default=None, gt=0)
    chars_per_token: float = Field(default=3.0, gt=0)

    def budget_chars(self) -> int | None:
        limits = [self.max_chars] if self.max_chars else []
        if self.max_tokens:
            limits.append(int(self.max_tokens * self.chars_per_token))
        return min(limits) if limits else None


def default_api_prefix(provider: str) -> str:
    """The provider adapter's own prefix (``/v1``, ``/v1beta``...); ``/v1`` if unknown."""
    adapter = ADAPTERS.get(provider)
    return adapter.default_api_prefix if adapter is not None else "/v1"


class LlmEndpoint(BaseModel):
    """Where and how to reach a model. Holds the *name* of the key variable, never the key."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    provider: str = "openai"
    model: str
    base_url: str = "http://127.0.0.1:8080"
    api_prefix: str = Field(
        default="/v1",
        description="Path between base_url and the endpoint; when unset (or None) the "
        "provider adapter's default: /v1 for openai and anthropic, /v1beta for gemini.",
    )
    api_key_env: str | None = Field(
        default=None,
        description="Name of the worker environment variable holding the API key.",
    )
    timeout_s: float = Field(default=120.0, gt=0)
    retry: RetrySettings = RetrySettings()
    unreachable_retry: RetrySettings = Field(
        default=RetrySettings(initial_interval_s=0.5, maximum_attempts=2),
        description="The shorter budget of a refused connection (PROVIDER_UNREACHABLE): "
        "attempts in all and the delay before the next one.",
    )
    llm_options: dict[str, JsonValue] = Field(
        default_factory=dict,
        description="Request options for this model (e.g. its sampling profile); "
        "runtime request_overrides win over them.",
    )
    context_window: ContextWindow | None = None
    tool_calling_reliable: bool | None = Field(
        default=None,
        description="Marks the model for tool_use_mode=enforced; None asks the catalog.",
    )
    structured_output: Literal["native", "tool"] | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="How a typed answer (output_schema) is asked for: native (response_format "
        "/ responseJsonSchema) or a final_answer tool; None: the provider's default "
        "(core.typed_output.request). Anthropic always uses the tool.",
    )

    @model_validator(mode="before")
    @classmethod
    def _provider_prefix(cls, data: object) -> object:
        if isinstance(data, dict) and data.get("api_prefix") is None:
            provider = data.get("provider") or "openai"
            data = {**data, "api_prefix": default_api_prefix(str(provider))}
        return data

    def label(self) -> str:
        """How errors name the endpoint: host (and port) and model, not the adapter, which
        any OpenAI-compatible server shares."""
        host = urlsplit(self.base_url).netloc or self.base_url
        return f"{host} (model {self.model})"

    @field_validator("llm_options")
    @classmethod
    def _drop_reserved_options(cls, value: dict[str, JsonValue]) -> dict[str, JsonValue]:
        return {k: v for k, v in value.items() if k not in RESERVED_REQUEST_KEYS}

    @field_validator("base_url")
    @classmethod
    def _base_url_is_http(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {value!r}")
        return value.rstrip("/")

    @field_validator("api_prefix")
    @classmethod
    def _prefix_shape(cls, value: str) -> str:
        value = value.strip()
        if value and not value.startswith("/"):
            value = "/" + value
        return value.rstrip("/")
