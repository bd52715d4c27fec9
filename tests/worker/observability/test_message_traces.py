"""One message is one trace: the client's ``send_message`` span is the root of every span
the worker makes for that message (issue 19, items 1 and 3)."""

from __future__ import annotations

from collections.abc import Iterator

import opentelemetry.trace
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from durable_loop.client.connect import connect
from durable_loop.client.sessions import SessionClient
from durable_loop.client.settings import TemporalSettings
from durable_loop.client.tracing import TraceContextPropagation
from durable_loop.core.config import RuntimeConfig
from durable_loop.testing import reply
from durable_loop.worker.observability.setup import tracing
from tests.conftest import settings_for, unique
from tests.worker.observability.test_worker_observability import calculator


@pytest.fixture
def global_spans() -> Iterator[tuple[InMemorySpanExporter, TracerProvider]]:
    """Spans of the process-wide tracer provider (what a CLI, service or client uses when
    nothing is passed), installed once per process; each test reads its own exporter."""
    provider = opentelemetry.trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        opentelemetry.trace.set_tracer_provider(provider)
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield exporter, provider
    exporter.shutdown()


def of_session(spans, sid: str) -> list:
    workflow_id = f"session-{sid}"
    return [
        s
        for s in spans
        if s.attributes.get("durable_loop.session_id") == sid
        or s.attributes.get("temporalWorkflowID") == workflow_id
    ]


def address_of(env) -> str:
    return env.client.service_client.config.target_host


async def test_connect_propagates_trace_context_by_default(temporal_env):
    settings = TemporalSettings(address=address_of(temporal_env))
    client = await connect(settings)
    assert [type(i) for i in client.config()["interceptors"]] == [TraceContextPropagation]
    bare = await connect(settings, interceptors=[])
    assert list(bare.config()["interceptors"]) == []


async def test_each_message_is_one_trace_rooted_at_send_message(
    loop_worker, scripted_llm, temporal_env, global_spans
):
    exporter, provider = global_spans
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model,
        [
            reply.tool_call("add", {"a": 2, "b": 3}, call_id="c-1"),
            reply.text("5", usage={"prompt_tokens": 40, "completion_tokens": 10}),
        ],
    )
    runtime = RuntimeConfig(max_session_tokens=50)
    async with loop_worker(calculator(), interceptors=tracing(provider, None)) as w:
        client = await connect(TemporalSettings(address=address_of(temporal_env)))
        sessions = SessionClient(client, task_queue=w.task_queue)
        w.sessions.started_workflow_ids.add(f"session-{sid}")
        await sessions.start(sid, settings_for(scripted_llm, model, runtime=runtime))
        first = await sessions.send(sid, "2+3?")
        second = await sessions.send(sid, "and again?")
    assert first.status == "completed", first
    assert second.status == "failed" and second.error and second.error.code == "BUDGET_EXCEEDED"

    spans = of_session(exporter.get_finished_spans(), sid)
    roots = {s.attributes["durable_loop.message_id"]: s for s in spans if s.name == "send_message"}
    assert set(roots) == {first.message_id, second.message_id}
    assert all(r.parent is None for r in roots.values())
    trace_of = {m: r.context.trace_id for m, r in roots.items()}
    assert len(set(trace_of.values())) == 2

    def in_trace(message_id: str, name: str) -> list:
        return [s for s in spans if s.name == name and s.context.trace_id == trace_of[message_id]]

    turns = in_trace(first.message_id, "durable_loop.turn")
    assert sorted(s.attributes["durable_loop.turn"] for s in turns) == [1, 2]
    assert len(in_trace(first.message_id, "durable_loop.llm_call")) == 2
    assert len(in_trace(first.message_id, "durable_loop.tool_call")) == 1
    assert len(in_trace(first.message_id, "HandleUpdate:send_message")) == 1
    for name in ("durable_loop.turn", "durable_loop.llm_call", "durable_loop.tool_call"):
        assert {s.context.trace_id for s in spans if s.name == name} == {trace_of[first.message_id]}
    assert len(in_trace(second.message_id, "HandleUpdate:send_message")) == 1
    assert in_trace(second.message_id, "StartActivity:write_messages")

    ok, failed = roots[first.message_id], roots[second.message_id]
    assert ok.status.status_code is StatusCode.UNSET
    assert ok.attributes["durable_loop.status"] == "completed"
    assert ok.attributes["durable_loop.turns"] == 2
    assert failed.status.status_code is StatusCode.ERROR
    assert failed.attributes["durable_loop.error_code"] == "BUDGET_EXCEEDED"
    assert failed.attributes["durable_loop.status"] == "failed"
    (ended,) = in_trace(second.message_id, "durable_loop.message")
    assert ended.attributes["durable_loop.error_code"] == "BUDGET_EXCEEDED"


async def test_a_message_without_trace_context_still_gets_a_trace_of_its_own(
    loop_worker, scripted_llm, global_spans
):
    exporter, provider = global_spans
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model, [reply.tool_call("add", {"a": 1, "b": 1}, call_id="c-1"), reply.text("2")]
    )
    async with loop_worker(calculator(), interceptors=tracing(provider, None)) as w:
        # the fixture's client has no TracingInterceptor: nothing is propagated
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        await w.sessions.send(sid, "1+1?")
    spans = of_session(exporter.get_finished_spans(), sid)
    (checked,) = [s for s in spans if s.name == "ValidateUpdate:send_message"]
    (handled,) = [s for s in spans if s.name == "HandleUpdate:send_message"]
    assert checked.parent is None  # the root of the message's trace
    assert handled.parent is not None and handled.parent.span_id == checked.context.span_id
    message_spans = [
        s
        for s in spans
        if s.name.startswith("durable_loop.") or s.name.split(":")[-1] in ("llm_turn", "run_tool")
    ]
    assert len([s for s in message_spans if s.name == "durable_loop.llm_call"]) == 2
    assert {s.context.trace_id for s in message_spans} == {handled.context.trace_id}
    (ended,) = [s for s in message_spans if s.name == "durable_loop.message"]
    assert ended.attributes["durable_loop.status"] == "completed"
    assert ended.attributes["durable_loop.turns"] == 2
