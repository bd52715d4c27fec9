"""Trace context from a client into the session: one message is one trace.

:func:`~durable_loop.client.connect.connect` puts :class:`TraceContextPropagation` on every
client, and :class:`~durable_loop.client.sessions.SessionClient` opens a ``send_message``
span around each message, so the worker's spans for that message join the caller's trace.
Without a configured OpenTelemetry SDK the spans are no-ops and nothing is propagated.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import opentelemetry.trace
import temporalio.client
from opentelemetry.trace import Span, SpanKind, Status, StatusCode
from temporalio.contrib.opentelemetry import TracingInterceptor

from durable_loop.core.contracts import RunResult

TRACER_NAME = "durable_loop"
SEND_MESSAGE_SPAN = "send_message"


class TraceContextPropagation(temporalio.client.Interceptor):
    """The client half of Temporal's ``TracingInterceptor`` only.

    A ``TracingInterceptor`` on a client also applies to every worker built on it, which
    would double the spans of a worker that brings its own (``worker/observability``).
    """

    def __init__(self, tracer: opentelemetry.trace.Tracer | None = None) -> None:
        self._tracing = TracingInterceptor(tracer or opentelemetry.trace.get_tracer(TRACER_NAME))

    def intercept_client(
        self, next: temporalio.client.OutboundInterceptor
    ) -> temporalio.client.OutboundInterceptor:
        return self._tracing.intercept_client(next)


@contextmanager
def message_span(session_id: str, message_id: str) -> Iterator[Span]:
    """The root span of one message; :func:`end_message_span` records how it ended."""
    tracer = opentelemetry.trace.get_tracer(TRACER_NAME)
    attributes = {"durable_loop.session_id": session_id, "durable_loop.message_id": message_id}
    with tracer.start_as_current_span(
        SEND_MESSAGE_SPAN, kind=SpanKind.CLIENT, attributes=attributes
    ) as span:
        yield span


def end_message_span(span: Span, result: RunResult) -> RunResult:
    """Status, turns and error code of the message; a failed message is a failed span."""
    span.set_attributes({"durable_loop.status": result.status, "durable_loop.turns": result.turns})
    if result.error is not None:
        span.set_attribute("durable_loop.error_code", result.error.code)
    if result.status == "failed":
        code = result.error.code if result.error else "failed"
        span.set_status(Status(StatusCode.ERROR, code))
    return result
