"""One message is one trace, on the worker side.

Temporal's ``TracingInterceptor`` parents every workflow span on the context the workflow
was *started* with and only links an Update's context, so all messages of a session share
the start's trace, and a session started without trace context (``durable-loop send``, the
Web UI) makes every ``StartActivity`` span a root of its own. Here the ``send_message``
Update's context is the parent of its ``ValidateUpdate`` and ``HandleUpdate`` spans (as for
every Update: :mod:`~durable_loop.worker.observability.update_traces`), and every activity
and child session the loop starts while answering that message (and its
``durable_loop.turn`` spans) is created under the ``HandleUpdate`` span. A message that
arrives without context gets a new trace of its own. The zero-length
``durable_loop.message`` span says how the message ended; a failed message's is an ERROR
span.

Like all workflow spans, these are made only when not replaying: a message resumed on
another worker after a restart continues under the workflow's context.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

import opentelemetry.trace
from temporalio import workflow
from temporalio.contrib.opentelemetry import TracingInterceptor, TracingWorkflowInboundInterceptor
from temporalio.worker import (
    HandleUpdateInput,
    WorkflowInboundInterceptor,
    WorkflowInterceptorClassInput,
)

from durable_loop.core import names
from durable_loop.core.contracts import RunResult
from durable_loop.worker.observability.span_status import StatusMarkingTracer, error_attributes
from durable_loop.worker.observability.update_traces import (
    Carrier,
    UpdateTracingInbound,
    attached,
    in_update_context,
)

MESSAGE_SPAN = "durable_loop.message"
MESSAGE_SPAN_PREFIXES = (
    "StartActivity:",
    "StartChildWorkflow:",
    "SignalChildWorkflow:",
    "SignalExternalWorkflow:",
    "durable_loop.",
)
"""Workflow spans made while a message runs that belong to the message's trace."""


class SessionTracingInterceptor(TracingInterceptor):
    """``TracingInterceptor`` whose workflow side traces each message and each Update on
    its own, and whose workflow spans can be ERROR spans."""

    def __init__(
        self,
        tracer: opentelemetry.trace.Tracer | None = None,
        *,
        always_create_workflow_spans: bool = False,
    ) -> None:
        inner = tracer or opentelemetry.trace.get_tracer(__name__)
        super().__init__(
            StatusMarkingTracer(inner), always_create_workflow_spans=always_create_workflow_spans
        )

    def workflow_interceptor_class(
        self, input: WorkflowInterceptorClassInput
    ) -> type[TracingWorkflowInboundInterceptor]:
        super().workflow_interceptor_class(input)  # registers the span-making extern
        return MessageTracingInbound


class MessageTracingInbound(UpdateTracingInbound):
    def __init__(self, next: WorkflowInboundInterceptor) -> None:
        super().__init__(next)
        self._messages: dict[str, Carrier] = {}

    async def handle_update_handler(self, input: HandleUpdateInput) -> Any:
        if input.update != names.UPDATE_SEND_MESSAGE:
            return await super().handle_update_handler(input)
        message = input.args[0] if input.args else None
        # the id the session workflow files the message under
        message_id = getattr(message, "message_id", None) or input.id
        owner = message_id not in self._messages
        carrier = self._update_span(f"HandleUpdate:{input.update}", input)
        if owner and carrier:
            self._messages[message_id] = carrier
        context = self._own(self._extract(carrier)) if carrier else self._update_context(input)
        try:
            with attached(context):  # the handler runs in a task of its own
                result = await self.next.handle_update_handler(input)
            if owner and carrier:
                self._message_ended(carrier, result)
            return result
        finally:
            if owner:
                self._messages.pop(message_id, None)

    def _message_ended(self, carrier: Carrier, result: object) -> None:
        """A zero-length ``durable_loop.message`` span in the message's trace with how it
        ended, also when the caller sent no context (and so has no span to mark); a
        failed message's is an ERROR span with the error's code."""
        if not isinstance(result, RunResult):
            return
        attributes: dict[str, str | int] = {
            "durable_loop.message_id": result.message_id,
            "durable_loop.status": result.status,
            "durable_loop.turns": result.turns,
        }
        if result.error is not None:
            attributes["durable_loop.error_code"] = result.error.code
        if result.status == "failed":
            attributes.update(error_attributes(result.error.code if result.error else "failed"))
        with self._in_message(carrier):
            super()._completed_span(MESSAGE_SPAN, additional_attributes=attributes)

    def _completed_span(self, span_name: str, **kwargs: Any) -> None:
        carrier = (
            self._message_carrier()
            if span_name.startswith(MESSAGE_SPAN_PREFIXES) and not in_update_context()
            else None
        )
        if carrier is None:
            super()._completed_span(span_name, **kwargs)
            return
        with self._in_message(carrier):
            super()._completed_span(span_name, **kwargs)

    def _in_message(self, carrier: Carrier) -> AbstractContextManager[None]:
        return attached(self._set_on_context(self._extract(carrier)))

    def _message_carrier(self) -> Carrier | None:
        # Read by name: the workflow class inside the sandbox is not the one importable here.
        message_id = getattr(workflow.instance(), "message_in_progress", None)
        return self._messages.get(message_id) if isinstance(message_id, str) else None
