"""The circuit breaker's states, with the time passed in."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from durable_loop.core.circuit import CircuitBreaker, CircuitBreakerSettings
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.errors import CodedError

T0 = datetime(2026, 1, 1, tzinfo=UTC)
MODEL = LlmEndpoint(model="m")


def down(code: str = "PROVIDER_UNREACHABLE") -> CodedError:
    return CodedError(code=code, message="down")


def test_it_opens_after_the_threshold_and_probes_after_the_cool_down():
    breaker = CircuitBreaker(CircuitBreakerSettings(failure_threshold=2, cool_down_s=30))
    breaker.failed(MODEL, down(), T0)
    assert breaker.verdict(MODEL, T0) == "closed"
    breaker.failed(MODEL, down("HTTP_503"), T0)
    assert breaker.verdict(MODEL, T0 + timedelta(seconds=29)) == "open"
    assert breaker.verdict(MODEL, T0 + timedelta(seconds=30)) == "probe"
    breaker.failed(MODEL, down(), T0 + timedelta(seconds=30))  # the probe failed
    assert breaker.open_until(MODEL) == T0 + timedelta(seconds=60)
    breaker.succeeded(MODEL)
    assert breaker.verdict(MODEL, T0) == "closed" and breaker.state.circuits == {}


def test_errors_that_blame_the_request_never_open_it():
    breaker = CircuitBreaker(CircuitBreakerSettings())
    for code in ("PROVIDER_BAD_REQUEST", "PROVIDER_AUTH", "PROVIDER_BAD_RESPONSE"):
        breaker.failed(MODEL, down(code), T0)
    assert breaker.verdict(MODEL, T0) == "closed"


def test_models_are_kept_apart_by_provider_model_and_url():
    breaker = CircuitBreaker(CircuitBreakerSettings())
    breaker.failed(MODEL, down(), T0)
    other = MODEL.model_copy(update={"base_url": "http://elsewhere:1"})
    assert (breaker.verdict(MODEL, T0), breaker.verdict(other, T0)) == ("open", "closed")
