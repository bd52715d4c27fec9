"""Observability of a worker process from its environment (read by ``workers/``, which
passes the mapping in): OTEL_* for tracing, DURABLE_LOOP_METRICS_* and DURABLE_LOOP_LOG_*."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

import opentelemetry.trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter
from pydantic import BaseModel, Field
from temporalio.worker import Interceptor

from durable_loop.worker.observability.interceptor import ObservabilityInterceptor
from durable_loop.worker.observability.logs import configure_logging
from durable_loop.worker.observability.message_traces import SessionTracingInterceptor
from durable_loop.worker.observability.metrics import WorkerMetrics

SERVICE_NAME = "durable-loop-worker"
OTLP_ENDPOINTS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


class ObservabilitySettings(BaseModel):
    traces_exporter: str = Field(
        default="none", description="OTEL_TRACES_EXPORTER: otlp, console or none"
    )
    metrics_port: int | None = Field(default=None, ge=1, le=65535)
    metrics_address: str = "127.0.0.1"
    log_format: str = Field(default="text", pattern="^(text|json)$")
    log_level: str = "INFO"
    configure_logs: bool = False

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> ObservabilitySettings:
        exporter = environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
        if not exporter:
            exporter = "otlp" if any(environ.get(name) for name in OTLP_ENDPOINTS) else "none"
        if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
            exporter = "none"
        port = environ.get("DURABLE_LOOP_METRICS_PORT", "").strip()
        return cls.model_validate(
            {
                "traces_exporter": exporter,
                "metrics_port": port or None,
                "metrics_address": environ.get("DURABLE_LOOP_METRICS_ADDRESS") or "127.0.0.1",
                "log_format": (environ.get("DURABLE_LOOP_LOG_FORMAT") or "text").lower(),
                "log_level": environ.get("DURABLE_LOOP_LOG_LEVEL") or "INFO",
                "configure_logs": bool(
                    environ.get("DURABLE_LOOP_LOG_FORMAT") or environ.get("DURABLE_LOOP_LOG_LEVEL")
                ),
            }
        )


@dataclass
class Observability:
    interceptors: list[Interceptor] = field(default_factory=list)
    metrics: WorkerMetrics | None = None
    provider: TracerProvider | None = None

    def shutdown(self) -> None:
        if self.provider is not None:
            self.provider.shutdown()


def service_resource(default_name: str = SERVICE_NAME) -> Resource:
    """The SDK's own detection (``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``, the
    configured detectors) decides; ``default_name`` only replaces its ``unknown_service``."""
    detected = Resource.create()
    name = str(detected.attributes.get("service.name", ""))
    if name and not name.startswith("unknown_service"):
        return detected
    return detected.merge(Resource({"service.name": default_name}))


def _exporter(name: str) -> SpanExporter:
    if name == "console":
        return ConsoleSpanExporter()
    if name == "otlp":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        return OTLPSpanExporter()  # reads OTEL_EXPORTER_OTLP_* itself
    raise ValueError(f"OTEL_TRACES_EXPORTER={name!r} is not supported: use otlp, console or none")


def tracing(provider: TracerProvider, metrics: WorkerMetrics | None) -> list[Interceptor]:
    """The tracing interceptor first (its workflow context is what turn spans attach to)."""
    tracer = provider.get_tracer("durable_loop")
    return [
        SessionTracingInterceptor(tracer, always_create_workflow_spans=True),
        ObservabilityInterceptor(tracer=tracer, metrics=metrics),
    ]


@contextmanager
def process_tracing(environ: Mapping[str, str], default_name: str) -> Iterator[None]:
    """A process-wide tracer provider for a client process (CLI, service) from OTEL_*, so
    its ``send_message`` spans, the roots of the messages' traces, are exported too; its
    spans are flushed when the block ends. Nothing is installed without an exporter."""
    settings = ObservabilitySettings.from_env(environ)
    if settings.traces_exporter == "none":
        yield
        return
    provider = TracerProvider(resource=service_resource(default_name))
    provider.add_span_processor(BatchSpanProcessor(_exporter(settings.traces_exporter)))
    opentelemetry.trace.set_tracer_provider(provider)
    try:
        yield
    finally:
        provider.shutdown()


def observability(settings: ObservabilitySettings) -> Observability:
    if settings.configure_logs:
        configure_logging(settings.log_format, settings.log_level)
    metrics = WorkerMetrics() if settings.metrics_port is not None else None
    if metrics is not None and settings.metrics_port is not None:
        metrics.serve(settings.metrics_port, settings.metrics_address)
    if settings.traces_exporter == "none":
        interceptors: list[Interceptor] = (
            [ObservabilityInterceptor(metrics=metrics)] if metrics else []
        )
        return Observability(interceptors=interceptors, metrics=metrics)
    provider = TracerProvider(resource=service_resource())
    provider.add_span_processor(BatchSpanProcessor(_exporter(settings.traces_exporter)))
    return Observability(
        interceptors=tracing(provider, metrics), metrics=metrics, provider=provider
    )
