"""A worker interceptor for spans, metrics and log context around every LLM and tool call.

Use it beside ``temporalio.contrib.opentelemetry.TracingInterceptor`` (which creates the
``RunActivity``/``StartActivity`` spans and propagates context): this one adds the
``durable_loop.llm_call`` and ``durable_loop.tool_call`` spans with session id, turn and
call id, a zero-duration ``durable_loop.turn`` span in the workflow per LLM turn, Prometheus
metrics, and the log context of :mod:`durable_loop.worker.observability.context`.
"""

from __future__ import annotations

import time
from typing import Any

import opentelemetry.trace
from opentelemetry.trace import Status, StatusCode
from temporalio import activity
from temporalio.exceptions import ApplicationError
from temporalio.worker import (
    ActivityInboundInterceptor,
    ExecuteActivityInput,
    Interceptor,
    WorkflowInterceptorClassInput,
)
from temporalio.worker import WorkflowInboundInterceptor as _WorkflowInbound

from durable_loop.core import names
from durable_loop.core.activity_contracts import LlmTurnInput, LlmTurnOutput, ToolRunOutput
from durable_loop.core.errors import ErrorCode
from durable_loop.core.proposals import FACTS_COMMIT, PROPOSAL_CLOSE, SettleOutput
from durable_loop.worker.observability.context import Subject, about, subject_of
from durable_loop.worker.observability.metrics import WorkerMetrics
from durable_loop.worker.observability.turn_spans import TurnSpans, fallback_attributes

TOOL_ACTIVITIES = {names.RUN_TOOL, names.RUN_LONG_TOOL}
SETTLE_ACTIVITIES = {FACTS_COMMIT, PROPOSAL_CLOSE}


def error_code(err: BaseException, default: str) -> str:
    """The code a failed activity raised (an ApplicationError's type), else ``default``."""
    if isinstance(err, ApplicationError) and err.type:
        return err.type
    return default


class ObservabilityInterceptor(Interceptor):
    def __init__(
        self,
        *,
        tracer: opentelemetry.trace.Tracer | None = None,
        metrics: WorkerMetrics | None = None,
        turn_spans: bool = True,
    ) -> None:
        self.tracer = tracer
        self.metrics = metrics
        self.turn_spans = turn_spans and tracer is not None

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _ActivityObserver(next, self)

    def workflow_interceptor_class(
        self, input: WorkflowInterceptorClassInput
    ) -> type[_WorkflowInbound] | None:
        """Turn spans need TracingInterceptor's workflow context (it must come first)."""
        return TurnSpans if self.turn_spans else None


class _ActivityObserver(ActivityInboundInterceptor):
    def __init__(self, next: ActivityInboundInterceptor, root: ObservabilityInterceptor) -> None:
        super().__init__(next)
        self.root = root

    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        kind = activity.info().activity_type
        subject = subject_of(input.args[0]) if input.args else None
        with about(subject):
            if kind == names.LLM_TURN:
                return await self._observe(input, "durable_loop.llm_call", subject, self._llm)
            if kind in TOOL_ACTIVITIES:
                return await self._observe(input, "durable_loop.tool_call", subject, self._tool)
            if kind in SETTLE_ACTIVITIES:
                return await self._observe(input, f"durable_loop.{kind}", subject, self._settle)
            return await super().execute_activity(input)

    async def _observe(
        self, input: ExecuteActivityInput, span_name: str, subject: Subject | None, record: Any
    ) -> Any:
        attributes: dict[str, Any] = dict(subject.attributes()) if subject else {}
        arg = input.args[0] if input.args else None
        for field in ("name", "assistant_seq"):
            if hasattr(arg, field):
                attributes[f"durable_loop.{field}"] = getattr(arg, field)
        endpoint = getattr(arg, "endpoint", None)
        if endpoint is not None:
            attributes["durable_loop.model"] = endpoint.model
        if isinstance(arg, LlmTurnInput):
            attributes.update(fallback_attributes(arg))
        attributes["durable_loop.attempt"] = activity.info().attempt
        # One pair of timestamps for the span and the latency metrics, so both agree.
        started = time.time_ns()
        span = (
            self.root.tracer.start_span(span_name, attributes=attributes, start_time=started)
            if self.root.tracer
            else opentelemetry.trace.INVALID_SPAN
        )
        try:
            with opentelemetry.trace.use_span(span, end_on_exit=False, record_exception=False):
                out = await super().execute_activity(input)
        except BaseException as err:
            span.set_status(Status(StatusCode.ERROR, str(err)))
            span.record_exception(err)
            record(arg, None, err, span)
            span.end(end_time=max(time.time_ns(), started))
            raise
        record(arg, out, None, span)
        ended = max(time.time_ns(), started)
        span.end(end_time=ended)
        self._observe_latency(arg, out, (ended - started) / 1e9)
        return out

    def _observe_latency(self, arg: Any, out: Any, seconds: float) -> None:
        metrics = self.root.metrics
        if metrics is None:
            return
        if isinstance(out, LlmTurnOutput) and not out.cached:
            model = out.model or getattr(getattr(arg, "endpoint", None), "model", "unknown")
            metrics.llm_latency.labels(model=model).observe(seconds)
        elif isinstance(out, ToolRunOutput) and not out.cached:
            metrics.tool_latency.labels(tool=getattr(arg, "name", "unknown")).observe(seconds)

    def _llm(self, arg: Any, out: Any, err: BaseException | None, span: Any) -> None:
        model = getattr(getattr(arg, "endpoint", None), "model", "unknown")
        metrics = self.root.metrics
        fell_back = isinstance(arg, LlmTurnInput) and bool(arg.fallback_from)
        if metrics is not None and fell_back and activity.info().attempt == 1:
            metrics.fallbacks.labels(
                from_model=arg.fallback_from[-1],
                to_model=model,
                reason=arg.fallback_reason or ErrorCode.ERROR,
            ).inc()
        if isinstance(out, LlmTurnOutput):
            span.set_attributes(
                {
                    "durable_loop.input_tokens": out.usage.input_tokens,
                    "durable_loop.output_tokens": out.usage.output_tokens,
                    "durable_loop.tool_calls": len(out.tool_calls),
                    "durable_loop.cached": out.cached,
                }
            )
            if metrics is not None and not out.cached:
                answered = out.model or model
                metrics.turns.labels(model=answered).inc()
                metrics.input_tokens.labels(model=answered).inc(out.usage.input_tokens)
                metrics.output_tokens.labels(model=answered).inc(out.usage.output_tokens)
        elif err is not None:
            code = error_code(err, ErrorCode.ERROR)
            span.set_attribute("durable_loop.error_code", code)
            if metrics is not None:
                metrics.llm_failures.labels(code=code, model=model).inc()

    def _tool(self, arg: Any, out: Any, err: BaseException | None, span: Any) -> None:
        tool = getattr(arg, "name", "unknown")
        metrics = self.root.metrics
        if isinstance(out, ToolRunOutput):
            outcome = "ok" if out.ok else "error"
            span.set_attributes(
                {
                    "durable_loop.ok": out.ok,
                    "durable_loop.error_codes": list(out.error_codes),
                    "durable_loop.output_bytes": out.output_bytes,
                    "durable_loop.proposal": bool(out.proposal),
                }
            )
            if not out.ok:
                code = out.error_codes[0] if out.error_codes else ErrorCode.TOOL_ERROR
                span.set_attribute("durable_loop.error_code", code)
                span.set_status(Status(StatusCode.ERROR, ",".join(out.error_codes) or code))
            if metrics is not None and not out.cached:
                metrics.tool_calls.labels(tool=tool, outcome=outcome).inc()
                if out.proposal is not None:
                    metrics.approvals_pending.inc()
        elif err is not None:
            span.set_attribute("durable_loop.error_code", error_code(err, ErrorCode.TOOL_ERROR))
            if metrics is not None:
                metrics.tool_calls.labels(tool=tool, outcome="failed").inc()

    def _settle(self, arg: Any, out: Any, err: BaseException | None, span: Any) -> None:
        if not isinstance(out, SettleOutput):
            return
        span.set_attribute("durable_loop.status", out.status)
        metrics = self.root.metrics
        if metrics is not None and not out.already_settled:
            metrics.decisions.labels(status=out.status).inc()
            metrics.approvals_pending.dec()
