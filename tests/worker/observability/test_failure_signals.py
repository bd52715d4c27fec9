"""Failures, fallbacks and tokens as span attributes and Prometheus series (issue 19, 2-4)."""

from __future__ import annotations

from opentelemetry.trace import StatusCode

from durable_loop.core.config import RuntimeConfig
from durable_loop.testing import reply
from durable_loop.worker.observability.setup import ObservabilitySettings, observability
from tests.conftest import settings_for, unique
from tests.worker.observability.test_worker_observability import observed, sample
from tests.workflows.test_fallback import endpoint
from tests.workflows.toolkit import ToolLog, recording_tools


def spans_named(exporter, name: str, sid: str) -> list:
    return [
        s
        for s in exporter.get_finished_spans()
        if s.name == name and s.attributes.get("durable_loop.session_id") == sid
    ]


async def test_fallback_failure_and_tokens_are_attributes_and_series(loop_worker, scripted_llm):
    exporter, metrics, interceptors = observed()
    primary, backup, sid = unique("primary"), unique("backup"), unique("s")
    scripted_llm.script(primary, [reply.error(400, "context length exceeded")])
    scripted_llm.script(
        backup,
        [
            reply.tool_call("flaky", {"reason": "x"}, call_id="c-flaky"),
            reply.text("done", usage={"prompt_tokens": 7, "completion_tokens": 2}),
        ],
    )
    settings = settings_for(
        scripted_llm, primary, runtime=RuntimeConfig(tool_failure_policy="tolerated")
    ).model_copy(update={"fallback_llms": [endpoint(scripted_llm, backup)]})
    async with loop_worker(recording_tools(ToolLog()), interceptors=interceptors) as w:
        await w.sessions.start(sid, settings)
        result = await w.sessions.send(sid, "hi")
    assert result.status == "completed", result
    assert [f.failed_model for f in result.fallbacks] == [primary, primary]

    llm = spans_named(exporter, "durable_loop.llm_call", sid)
    failed = [s for s in llm if s.attributes["durable_loop.model"] == primary]
    assert len(failed) == 2
    assert all(s.status.status_code is StatusCode.ERROR for s in failed)
    assert {s.attributes["durable_loop.error_code"] for s in failed} == {"PROVIDER_BAD_REQUEST"}

    (tool,) = spans_named(exporter, "durable_loop.tool_call", sid)
    assert tool.status.status_code is StatusCode.ERROR
    assert tool.attributes["durable_loop.error_code"] == "TOOL_ERROR"

    fell_back = [
        s
        for s in spans_named(exporter, "durable_loop.turn", sid)
        if "durable_loop.fallback.from" in s.attributes
    ]
    assert [s.attributes["durable_loop.turn"] for s in fell_back] == [1, 2]
    assert {
        (
            s.attributes["durable_loop.fallback.from"],
            s.attributes["durable_loop.fallback.to"],
            s.attributes["durable_loop.fallback.reason"],
        )
        for s in fell_back
    } == {(primary, backup, "PROVIDER_BAD_REQUEST")}

    code = "PROVIDER_BAD_REQUEST"
    assert sample(metrics, "durable_loop_llm_failures_total", code=code, model=primary) == 2
    assert (
        sample(
            metrics,
            "durable_loop_llm_fallbacks_total",
            from_model=primary,
            to_model=backup,
            reason=code,
        )
        == 2
    )
    usage = result.usage
    assert usage.input_tokens > 7 and usage.output_tokens > 2  # both turns reported usage
    assert (
        sample(metrics, "durable_loop_llm_input_tokens_total", model=backup) == usage.input_tokens
    )
    assert (
        sample(metrics, "durable_loop_llm_output_tokens_total", model=backup) == usage.output_tokens
    )

    answered = [s for s in llm if s.attributes["durable_loop.model"] == backup]
    span_seconds = sum((s.end_time - s.start_time) / 1e9 for s in answered)
    latency = sample(metrics, "durable_loop_llm_latency_seconds_sum", model=backup)
    assert latency == span_seconds


def test_otel_service_name_decides_the_service_name(monkeypatch):
    console = ObservabilitySettings(traces_exporter="console")
    monkeypatch.delenv("OTEL_SERVICE_NAME", raising=False)
    monkeypatch.delenv("OTEL_RESOURCE_ATTRIBUTES", raising=False)
    default = observability(console)
    named = "durable-loop-worker"
    assert default.provider is not None
    assert default.provider.resource.attributes["service.name"] == named
    default.shutdown()

    monkeypatch.setenv("OTEL_SERVICE_NAME", "checkout-agent")
    chosen = observability(console)
    assert chosen.provider is not None
    assert chosen.provider.resource.attributes["service.name"] == "checkout-agent"
    chosen.shutdown()

    monkeypatch.delenv("OTEL_SERVICE_NAME")
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "service.name=from-attributes,team=ml")
    attributed = observability(console)
    assert attributed.provider is not None
    assert attributed.provider.resource.attributes["service.name"] == "from-attributes"
    assert attributed.provider.resource.attributes["team"] == "ml"
    attributed.shutdown()
