"""Each Update (and each Signal) is traced where its caller is.

Temporal's ``TracingWorkflowInboundInterceptor`` makes the ``ValidateUpdate:<name>`` and
``HandleUpdate:<name>`` spans under the context the workflow was *started* with and only
links the Update's own context. A session started by its first message (update-with-start)
carries that message's context, so every later message's validation, and every other Update
(a budget change, a model switch, a decision), landed in the first message's trace.

Here both spans are children of the context the Update came with, and what the handler
starts (the budget change's audit activity) is a child of its ``HandleUpdate`` span. An
Update without context gets a trace of its own: the validation span is its root and the
handler's span its child. A validation that refuses the Update is an ERROR span with the
refusal's code; a refused or failed Update no longer leaves a ``CompleteWorkflow`` span
(it does not complete the workflow). A Signal's ``HandleSignal`` span is likewise a child
of the sender's context instead of a span in the start's trace linked to it.

Like all workflow spans, these are made only when not replaying.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import opentelemetry.context
import temporalio.api.common.v1
from opentelemetry.trace import SpanKind
from temporalio.contrib.opentelemetry import TracingWorkflowInboundInterceptor
from temporalio.worker import HandleSignalInput, HandleUpdateInput, WorkflowInboundInterceptor

from durable_loop.worker.observability.interceptor import error_code
from durable_loop.worker.observability.span_status import error_attributes

Carrier = dict[str, str]
Headers = Mapping[str, temporalio.api.common.v1.Payload]

OWN_CONTEXT = opentelemetry.context.create_key("durable_loop_update_context")
"""Set on the context an Update handler runs under: its spans stay in the Update's trace."""


class _Outbound:
    """Receives the headers ``_completed_span`` puts on an outbound call: the new span."""

    def __init__(self) -> None:
        self.headers: Headers = {}


class UpdateTracingInbound(TracingWorkflowInboundInterceptor):
    def __init__(self, next: WorkflowInboundInterceptor) -> None:
        super().__init__(next)
        self._validated: dict[str, Carrier] = {}
        """Update id -> its validation span, for an Update that came without context."""

    def handle_update_validator(self, input: HandleUpdateInput) -> None:
        try:
            self.next.handle_update_validator(input)
        except Exception as err:
            self._update_span(f"ValidateUpdate:{input.update}", input, refused=err)
            raise
        carrier = self._update_span(f"ValidateUpdate:{input.update}", input)
        if carrier and not input.headers.get(self.header_key):
            self._validated[input.id] = carrier

    async def handle_update_handler(self, input: HandleUpdateInput) -> Any:
        carrier = self._update_span(f"HandleUpdate:{input.update}", input)
        context = self._own(self._extract(carrier)) if carrier else self._update_context(input)
        with attached(context):  # the handler runs in a task of its own
            return await self.next.handle_update_handler(input)

    async def handle_signal(self, input: HandleSignalInput) -> None:
        """A Signal is traced like an Update: ``HandleSignal:<name>`` under the sender's
        context (or a new trace), not in the trace the session was started in."""
        # A Signal that fails the workflow still ends in the start's CompleteWorkflow span.
        with self._top_level_workflow_context(success_is_complete=False):
            out = _Outbound()
            with attached(self._context_of(input.headers)):
                self._completed_span(
                    f"HandleSignal:{input.signal}", add_to_outbound=out, kind=SpanKind.SERVER
                )
            carrier = self._carrier(out)
            own = self._own(self._extract(carrier)) if carrier else self._context_of(input.headers)
            with attached(own):  # the handler runs in a task of its own
                await self.next.handle_signal(input)

    def _update_span(
        self, name: str, input: HandleUpdateInput, refused: Exception | None = None
    ) -> Carrier | None:
        """A span under the Update's context; returns the context carrier of the span."""
        attributes = None
        if refused is not None:
            attributes = error_attributes(error_code(refused, type(refused).__name__))
        out = _Outbound()
        with attached(self._update_context(input)):
            self._completed_span(
                name,
                add_to_outbound=out,
                additional_attributes=attributes,
                exception=refused,
                kind=SpanKind.SERVER,
            )
        return self._carrier(out)

    def _carrier(self, out: _Outbound) -> Carrier | None:
        made = out.headers.get(self.header_key)
        return self.payload_converter.from_payloads([made])[0] if made else None

    def _update_context(self, input: HandleUpdateInput) -> opentelemetry.context.Context:
        """The caller's context, else the Update's validation span, else a new trace."""
        if not input.headers.get(self.header_key):
            validated = self._validated.pop(input.id, None)
            if validated:
                return self._own(self._extract(validated))
        return self._context_of(input.headers)

    def _context_of(self, headers: Headers) -> opentelemetry.context.Context:
        """The context in ``headers``, else an empty one (a new trace)."""
        header = headers.get(self.header_key)
        if header:
            return self._own(self._extract(self.payload_converter.from_payloads([header])[0]))
        return self._own(opentelemetry.context.Context())

    def _extract(self, carrier: Carrier) -> opentelemetry.context.Context:
        return self.text_map_propagator.extract(carrier)

    def _own(self, context: opentelemetry.context.Context) -> opentelemetry.context.Context:
        return self._set_on_context(opentelemetry.context.set_value(OWN_CONTEXT, True, context))


def in_update_context() -> bool:
    """Whether the current code runs under an Update's own context."""
    return bool(opentelemetry.context.get_value(OWN_CONTEXT))


@contextmanager
def attached(context: opentelemetry.context.Context) -> Iterator[None]:
    """Attach for a block; the detach runs in the task that attached (an Update's handler
    runs in a task of its own, so its block may await)."""
    token = opentelemetry.context.attach(context)
    try:
        yield
    finally:
        opentelemetry.context.detach(token)
