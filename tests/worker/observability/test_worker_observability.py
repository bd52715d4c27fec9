"""Spans (in-memory exporter), Prometheus metrics and JSON logs of a worker."""

from __future__ import annotations

import json
import logging

import pytest_asyncio
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from temporalio.client import Client

from durable_loop.client.sessions import SessionClient
from durable_loop.core.registry import ToolRegistry
from durable_loop.testing import reply
from durable_loop.tools.workspace import workspace_tools
from durable_loop.worker.observability.logs import JsonFormatter
from durable_loop.worker.observability.metrics import WorkerMetrics
from durable_loop.worker.observability.setup import ObservabilitySettings, tracing
from tests.client.kit import session_with_proposal, workspace_store
from tests.conftest import settings_for, unique

TOOL_LOG = logging.getLogger("tests.worker.observability.tool")


def calculator() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool()
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        TOOL_LOG.warning("adding %s and %s", a, b)
        return a + b

    return registry


def observed():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    metrics = WorkerMetrics()
    return exporter, metrics, tracing(provider, metrics)


def sample(metrics: WorkerMetrics, name: str, **labels: str) -> float | None:
    return metrics.registry.get_sample_value(name, labels)


@pytest_asyncio.fixture
async def ws(store_url):
    store = workspace_store(store_url)
    yield store
    await store.close()


async def test_spans_per_turn_llm_call_and_tool_call(loop_worker, scripted_llm):
    exporter, metrics, interceptors = observed()
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model, [reply.tool_call("add", {"a": 2, "b": 3}, call_id="call-7"), reply.text("5")]
    )
    async with loop_worker(calculator(), interceptors=interceptors) as w:
        # a client with the TracingInterceptor too: the session's spans join its trace
        config = w.sessions.client.config()
        config["interceptors"] = [interceptors[0]]
        sessions = SessionClient(Client(**config), task_queue=w.task_queue)
        w.sessions.started_workflow_ids.add(f"session-{sid}")
        await sessions.start(sid, settings_for(scripted_llm, model))
        result = await sessions.send(sid, "2+3?")
    assert result.status == "completed", result
    spans = exporter.get_finished_spans()
    by_name: dict[str, list] = {}
    for span in spans:
        by_name.setdefault(span.name, []).append(span)

    turns = [
        s for s in by_name["durable_loop.turn"] if s.attributes["durable_loop.session_id"] == sid
    ]
    assert sorted(s.attributes["durable_loop.turn"] for s in turns) == [1, 2]
    assert {s.attributes["durable_loop.model"] for s in turns} == {model}

    llm = [
        s
        for s in by_name["durable_loop.llm_call"]
        if s.attributes["durable_loop.session_id"] == sid
    ]
    assert sorted(s.attributes["durable_loop.turn"] for s in llm) == [1, 2]
    assert all(s.end_time > s.start_time for s in llm)
    run_llm = {s.context.span_id for s in by_name["RunActivity:llm_turn"]}
    assert all(s.parent.span_id in run_llm for s in llm)

    (tool,) = [
        s
        for s in by_name["durable_loop.tool_call"]
        if s.attributes["durable_loop.session_id"] == sid
    ]
    assert tool.attributes["durable_loop.call_id"] == "call-7"
    assert tool.attributes["durable_loop.turn"] == 1
    assert tool.attributes["durable_loop.name"] == "add"
    assert tool.attributes["durable_loop.ok"] is True
    run_tool = {s.context.span_id: s for s in by_name["RunActivity:run_tool"]}
    assert tool.parent.span_id in run_tool
    assert {s.context.trace_id for s in [*turns, *llm, tool]} == {tool.context.trace_id}

    assert sample(metrics, "durable_loop_turns_total", model=model) == 2
    assert sample(metrics, "durable_loop_llm_latency_seconds_count", model=model) == 2
    assert sample(metrics, "durable_loop_tool_calls_total", tool="add", outcome="ok") == 1
    assert sample(metrics, "durable_loop_tool_duration_seconds_count", tool="add") == 1


async def test_json_logs_carry_session_turn_and_call(loop_worker, scripted_llm):
    lines: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(self.format(record))

    handler = Collect()
    handler.setFormatter(JsonFormatter())
    TOOL_LOG.addHandler(handler)
    _, _, interceptors = observed()
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model, [reply.tool_call("add", {"a": 1, "b": 1}, call_id="call-log"), reply.text("2")]
    )
    try:
        async with loop_worker(calculator(), interceptors=interceptors) as w:
            await w.sessions.start(sid, settings_for(scripted_llm, model))
            await w.sessions.send(sid, "1+1?")
    finally:
        TOOL_LOG.removeHandler(handler)
    (line,) = [json.loads(text) for text in lines]
    assert line["message"] == "adding 1 and 1"
    assert (line["session_id"], line["turn"], line["call_id"]) == (sid, 1, "call-log")
    assert line["level"] == "warning"


async def test_approvals_pending_gauge_follows_proposals(
    loop_worker, scripted_llm, temporal_env, ws
):
    _, metrics, interceptors = observed()
    async with loop_worker(workspace_tools(ws), interceptors=interceptors) as w:
        _, sid, pending = await session_with_proposal(w, ws, scripted_llm, temporal_env)
        assert sample(metrics, "durable_loop_approvals_pending") == 1
        await w.sessions.confirm(sid, pending.proposal_id, "alice")
    assert sample(metrics, "durable_loop_approvals_pending") == 0
    assert sample(metrics, "durable_loop_proposal_outcomes_total", status="committed") == 1
    assert sample(metrics, "durable_loop_tool_calls_total", tool="facts_propose", outcome="ok") == 1


def test_settings_from_the_standard_variables():
    assert ObservabilitySettings.from_env({}).traces_exporter == "none"
    otlp = ObservabilitySettings.from_env({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"})
    assert otlp.traces_exporter == "otlp"
    off = ObservabilitySettings.from_env(
        {"OTEL_TRACES_EXPORTER": "console", "OTEL_SDK_DISABLED": "true"}
    )
    assert off.traces_exporter == "none"
    chosen = ObservabilitySettings.from_env(
        {"DURABLE_LOOP_METRICS_PORT": "9464", "DURABLE_LOOP_LOG_FORMAT": "JSON"}
    )
    assert (chosen.metrics_port, chosen.log_format, chosen.configure_logs) == (9464, "json", True)
