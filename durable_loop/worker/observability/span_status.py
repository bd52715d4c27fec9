"""An ERROR status for spans made inside a workflow.

Workflow spans are made outside the sandbox by Temporal's tracing interceptor, which can
record an exception on them but not set their status, so a failed message's
``durable_loop.message`` span came out UNSET. A workflow-side span says it failed with the
:data:`ERROR_MARK` attribute (its value is the status description); the tracer the worker's
tracing interceptor is built with takes the attribute off and sets the status.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import opentelemetry.context
import opentelemetry.trace
from opentelemetry.trace import Link, Span, SpanKind, Status, StatusCode
from opentelemetry.util import types

ERROR_MARK = "durable_loop.otel_error"


def error_attributes(description: str) -> dict[str, str]:
    """The attribute that makes a workflow-side span an ERROR span."""
    return {ERROR_MARK: description}


class StatusMarkingTracer(opentelemetry.trace.Tracer):
    """A tracer that turns :data:`ERROR_MARK` into the span's status."""

    def __init__(self, inner: opentelemetry.trace.Tracer) -> None:
        self._inner = inner

    def start_span(
        self,
        name: str,
        context: opentelemetry.context.Context | None = None,
        kind: SpanKind = SpanKind.INTERNAL,
        attributes: types.Attributes = None,
        links: Sequence[Link] | None = None,
        start_time: int | None = None,
        record_exception: bool = True,
        set_status_on_exception: bool = True,
    ) -> Span:
        error: object = None
        if attributes and ERROR_MARK in attributes:
            error = attributes[ERROR_MARK]
            attributes = {k: v for k, v in attributes.items() if k != ERROR_MARK}
        span = self._inner.start_span(
            name,
            context,
            kind,
            attributes,
            links,
            start_time,
            record_exception,
            set_status_on_exception,
        )
        if error is not None:
            span.set_status(Status(StatusCode.ERROR, str(error)))
        return span

    @contextmanager
    def start_as_current_span(  # type: ignore[override]
        self,
        name: str,
        context: opentelemetry.context.Context | None = None,
        kind: SpanKind = SpanKind.INTERNAL,
        attributes: types.Attributes = None,
        links: Sequence[Link] | None = None,
        start_time: int | None = None,
        record_exception: bool = True,
        set_status_on_exception: bool = True,
        end_on_exit: bool = True,
    ) -> Iterator[Span]:
        with self._inner.start_as_current_span(
            name,
            context,
            kind,
            attributes,
            links,
            start_time,
            record_exception,
            set_status_on_exception,
            end_on_exit,
        ) as span:
            yield span
