"""Workflow side of the worker's ``ObservabilityInterceptor``:
a zero-duration ``durable_loop.turn`` span each time the loop starts an LLM turn.

Workflow spans of the TracingInterceptor are always zero-duration (a long-lived span is not
replay-safe); ``completed_span`` emits nothing while replaying. Runs in the sandbox, so
it only reads the activity input it is handed.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.contrib.opentelemetry import workflow as otel_workflow
from temporalio.worker import (
    StartActivityInput,
    WorkflowInboundInterceptor,
    WorkflowOutboundInterceptor,
)

from durable_loop.core import names
from durable_loop.core.activity_contracts import LlmTurnInput


def fallback_attributes(inp: LlmTurnInput) -> dict[str, str]:
    """The fallback that led to this attempt (from -> to, reason), or nothing."""
    if not inp.fallback_from:
        return {}
    return {
        "durable_loop.fallback.from": inp.fallback_from[-1],
        "durable_loop.fallback.to": inp.endpoint.model,
        "durable_loop.fallback.reason": inp.fallback_reason or "",
    }


class TurnSpans(WorkflowInboundInterceptor):
    def init(self, outbound: WorkflowOutboundInterceptor) -> None:
        super().init(_TurnOutbound(outbound))


class _TurnOutbound(WorkflowOutboundInterceptor):
    def start_activity(self, input: StartActivityInput) -> workflow.ActivityHandle:
        arg = input.args[0] if input.args else None
        if input.activity == names.LLM_TURN and isinstance(arg, LlmTurnInput):
            otel_workflow.completed_span(
                "durable_loop.turn",
                attributes={
                    "durable_loop.session_id": arg.transcript.session_id,
                    "durable_loop.turn": arg.turn,
                    "durable_loop.model": arg.endpoint.model,
                    "durable_loop.appends": len(arg.appends),
                    **fallback_attributes(arg),
                },
            )
        return super().start_activity(input)
