"""One message is one trace, on the worker side.

Temporal's ``TracingInterceptor`` parents every workflow span on the context the workflow
was *started* with and only links an Update's context, so all messages of a session share
the start's trace, and a session started without trace context (``durable-loop send``, the
Web UI) makes every ``StartActivity`` span a root of its own. Here the ``send_message``
Update's context is the parent of its ``HandleUpdate`` span, and every activity the loop
starts while answering that message (and its ``durable_loop.turn`` spans) is created under
that span. A message that arrives without context gets a new trace of its own.

Like all workflow spans, these are made only when not replaying: a message resumed on
another worker after a restart continues under the workflow's context.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import opentelemetry.context
import temporalio.api.common.v1
from opentelemetry.trace import SpanKind
from temporalio import workflow
from temporalio.contrib.opentelemetry import TracingInterceptor, TracingWorkflowInboundInterceptor
from temporalio.worker import (
    HandleUpdateInput,
    WorkflowInboundInterceptor,
    WorkflowInterceptorClassInput,
)

from durable_loop.core import names
from durable_loop.core.contracts import RunResult

MESSAGE_SPAN = "durable_loop.message"
MESSAGE_SPAN_PREFIXES = ("StartActivity:", "durable_loop.")
"""Workflow spans made while a message runs that belong to the message's trace."""

Carrier = dict[str, str]
Headers = Mapping[str, temporalio.api.common.v1.Payload]


class SessionTracingInterceptor(TracingInterceptor):
    """``TracingInterceptor`` whose workflow side traces each message on its own."""

    def workflow_interceptor_class(
        self, input: WorkflowInterceptorClassInput
    ) -> type[TracingWorkflowInboundInterceptor]:
        super().workflow_interceptor_class(input)  # registers the span-making extern
        return MessageTracingInbound


class _Outbound:
    """Receives the headers ``_completed_span`` puts on an outbound call: the new span."""

    def __init__(self) -> None:
        self.headers: Headers = {}


class MessageTracingInbound(TracingWorkflowInboundInterceptor):
    def __init__(self, next: WorkflowInboundInterceptor) -> None:
        super().__init__(next)
        self._messages: dict[str, Carrier] = {}

    async def handle_update_handler(self, input: HandleUpdateInput) -> Any:
        if input.update != names.UPDATE_SEND_MESSAGE:
            return await super().handle_update_handler(input)
        message = input.args[0] if input.args else None
        # the id the session workflow files the message under
        message_id = getattr(message, "message_id", None) or input.id
        with self._top_level_workflow_context(success_is_complete=False):
            owner = message_id not in self._messages
            carrier = self._handle_span(input.headers)
            if owner and carrier:
                self._messages[message_id] = carrier
            try:
                result = await self.next.handle_update_handler(input)
                if owner and carrier:
                    self._message_ended(carrier, result)
                return result
            finally:
                if owner:
                    self._messages.pop(message_id, None)

    def _message_ended(self, carrier: Carrier, result: object) -> None:
        """A zero-length ``durable_loop.message`` span in the message's trace with how it
        ended, also when the caller sent no context (and so has no span to mark)."""
        if not isinstance(result, RunResult):
            return
        attributes: dict[str, str | int] = {
            "durable_loop.message_id": result.message_id,
            "durable_loop.status": result.status,
            "durable_loop.turns": result.turns,
        }
        if result.error is not None:
            attributes["durable_loop.error_code"] = result.error.code
        with self._in_message(carrier):
            super()._completed_span(MESSAGE_SPAN, additional_attributes=attributes)

    def _handle_span(self, headers: Headers) -> Carrier | None:
        """``HandleUpdate:send_message`` as a child of the caller's span (or a new root);
        returns the context carrier the message's spans are made under."""
        header = headers.get(self.header_key)
        parent = (
            self.text_map_propagator.extract(self.payload_converter.from_payloads([header])[0])
            if header
            else opentelemetry.context.Context()
        )
        out = _Outbound()
        with _attached(self._set_on_context(parent)):
            super()._completed_span(
                f"HandleUpdate:{names.UPDATE_SEND_MESSAGE}",
                add_to_outbound=out,
                kind=SpanKind.SERVER,
            )
        made = out.headers.get(self.header_key)
        return self.payload_converter.from_payloads([made])[0] if made else None

    def _completed_span(self, span_name: str, **kwargs: Any) -> None:
        carrier = self._message_carrier() if span_name.startswith(MESSAGE_SPAN_PREFIXES) else None
        if carrier is None:
            super()._completed_span(span_name, **kwargs)
            return
        with self._in_message(carrier):
            super()._completed_span(span_name, **kwargs)

    def _in_message(self, carrier: Carrier) -> AbstractContextManager[None]:
        return _attached(self._set_on_context(self.text_map_propagator.extract(carrier)))

    def _message_carrier(self) -> Carrier | None:
        # Read by name: the workflow class inside the sandbox is not the one importable here.
        message_id = getattr(workflow.instance(), "message_in_progress", None)
        return self._messages.get(message_id) if isinstance(message_id, str) else None


@contextmanager
def _attached(context: opentelemetry.context.Context) -> Iterator[None]:
    """Attach for a block without an await in it (so the detach is in the same context)."""
    token = opentelemetry.context.attach(context)
    try:
        yield
    finally:
        opentelemetry.context.detach(token)
