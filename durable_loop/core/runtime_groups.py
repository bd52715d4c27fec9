"""The groups of ``RuntimeConfig`` fields that travel together: ``retries`` (timeouts,
retries and fallback of tools and models), ``history`` (what workflow history holds
and when a session continues as new) and ``transforms`` (the named shape transforms and
the provider's normalisation, ``core/transforms/names.TransformsConfig``).

Their fields were top-level keys before; stored histories and users' settings files still
carry them flat. :func:`lift` moves such keys into their group (the config's
before-validator; a flat key given beside its group wins, as a later update does),
:func:`flatten` renders a dump in the old flat shape (settings digests), and
:data:`MOVED` names the new key of each old one (the CLI says it).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from durable_loop.core.circuit import CircuitBreakerSettings
from durable_loop.core.retry import RetrySettings
from durable_loop.core.transforms.names import TransformsConfig


class RetriesConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    tool_timeout_s: float = Field(default=60.0, gt=0, description="For tools that set none")
    tool_retry: RetrySettings = Field(
        default=RetrySettings(maximum_attempts=3), description="For tools that set none"
    )
    heartbeat_timeout_s: float | None = Field(
        default=10.0,
        gt=0,
        description="Heartbeat timeout of the LLM and tool activities: a worker that dies "
        "mid-call is noticed (and the call retried elsewhere) after this, not after the whole "
        "start-to-close timeout. None: no heartbeat timeout.",
    )
    fallback_retry_count: int = Field(
        default=0, ge=0, description="Relaxed mode: retries without tools after a provider failure"
    )
    circuit_breaker: CircuitBreakerSettings = Field(
        default_factory=CircuitBreakerSettings,
        description="Skip a model of the fallback chain that keeps failing, for a cool-down",
    )


class HistoryConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    inline_bytes: int = Field(
        default=512,
        ge=0,
        description="Largest tool-output preview or reply kept inline in workflow history.",
    )
    transcript_tail: int = Field(default=20, ge=1, le=500)
    continue_as_new_after_events: int = Field(default=8_000, ge=200)
    summarize_dropped_context: bool = Field(
        default=False,
        description="When the context window leaves messages out, summarise them once "
        "(its own activity) and send the summary in their place.",
    )


GROUPS: dict[str, type[BaseModel]] = {
    "retries": RetriesConfig,
    "history": HistoryConfig,
    "transforms": TransformsConfig,
}
MOVED: dict[str, str] = {
    key: f"{group}.{key}" for group, model in GROUPS.items() for key in model.model_fields
}


def lift(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with its flat group keys moved into their groups."""
    if not any(key in data for key in MOVED):
        return data
    data = dict(data)
    for group, model in GROUPS.items():
        flat = {key: data.pop(key) for key in model.model_fields if key in data}
        if not flat:
            continue
        given = data.get(group)
        before = given.model_dump() if isinstance(given, BaseModel) else dict(given or {})
        data[group] = {**before, **flat}
    return data


def flatten(dump: dict[str, Any]) -> dict[str, Any]:
    """A config dump with its groups' fields back at the top level."""
    flat = dict(dump)
    for group in GROUPS:
        flat.update(flat.pop(group, {}))
    return flat
