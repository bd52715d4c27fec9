"""A per-session circuit breaker for the models of a fallback chain.

A model whose turn failed with a retryable error (its retries spent) ``failure_threshold``
times in a row is *open*: later turns skip it and go straight to the next model of the
chain, until ``cool_down_s`` have passed. Then the next turn *probes* it with a single
attempt: a reply closes the circuit, a failure opens it for another cool-down.

Pure: the caller passes the time (``workflow.now()`` in the session workflow), and the
state is a model the session carries across continue-as-new.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.errors import HTTP_STATUS_PREFIX, CodedError, ErrorCode

Verdict = Literal["closed", "open", "probe"]

TRIPPING_CODES = frozenset({ErrorCode.PROVIDER_UNAVAILABLE, ErrorCode.PROVIDER_UNREACHABLE})


class CircuitBreakerSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = True
    failure_threshold: int = Field(
        default=1,
        ge=1,
        description="Turns in a row that failed on a model with a retryable error (after "
        "its retries) before later turns skip it",
    )
    cool_down_s: float = Field(
        default=60.0, gt=0, description="How long an open model is skipped before a probe"
    )


class CircuitState(BaseModel):
    failures: int = 0
    open_until: datetime | None = None
    last_error: CodedError | None = None


class BreakerState(BaseModel):
    circuits: dict[str, CircuitState] = Field(
        default_factory=dict, description="endpoint key -> its circuit; closed ones are absent"
    )


def endpoint_key(endpoint: LlmEndpoint) -> str:
    return f"{endpoint.provider}:{endpoint.model}@{endpoint.base_url}"


def trips(error: CodedError) -> bool:
    """Whether a failure says the model is down (not that this request was wrong)."""
    return error.code in TRIPPING_CODES or error.code.startswith(HTTP_STATUS_PREFIX)


class CircuitBreaker:
    def __init__(self, settings: CircuitBreakerSettings, state: BreakerState | None = None):
        self.settings = settings
        self.state = state or BreakerState()

    def verdict(self, endpoint: LlmEndpoint, now: datetime) -> Verdict:
        circuit = self.state.circuits.get(endpoint_key(endpoint))
        if circuit is None or circuit.open_until is None:
            return "closed"
        return "open" if now < circuit.open_until else "probe"

    def open_until(self, endpoint: LlmEndpoint) -> datetime | None:
        circuit = self.state.circuits.get(endpoint_key(endpoint))
        return circuit.open_until if circuit else None

    def failed(self, endpoint: LlmEndpoint, error: CodedError, now: datetime) -> None:
        if not trips(error):
            return
        key = endpoint_key(endpoint)
        circuit = self.state.circuits.setdefault(key, CircuitState())
        circuit.failures += 1
        circuit.last_error = error
        if circuit.open_until is not None or circuit.failures >= self.settings.failure_threshold:
            circuit.open_until = now + timedelta(seconds=self.settings.cool_down_s)

    def succeeded(self, endpoint: LlmEndpoint) -> None:
        self.state.circuits.pop(endpoint_key(endpoint), None)


def skipped_error(endpoint: LlmEndpoint, until: datetime | None) -> CodedError:
    return CodedError(
        code=ErrorCode.CIRCUIT_OPEN,
        message=f"{endpoint.model} skipped: its circuit breaker is open until "
        f"{until.isoformat() if until else '?'} after repeated failures",
    )
