"""Prometheus metrics of a worker (prometheus-client, one registry per worker)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 40, 80, 160)


class WorkerMetrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.turns = Counter(
            "durable_loop_turns", "LLM turns answered, by model", ["model"], registry=r
        )
        self.llm_latency = Histogram(
            "durable_loop_llm_latency_seconds",
            "Latency of one LLM request, by model",
            ["model"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.llm_failures = Counter(
            "durable_loop_llm_failures",
            "LLM activity attempts that failed, by error code",
            ["code"],
            registry=r,
        )
        self.tool_calls = Counter(
            "durable_loop_tool_calls",
            "Tool calls executed, by tool and outcome (ok, error: the envelope carries "
            "error codes, failed: the activity raised)",
            ["tool", "outcome"],
            registry=r,
        )
        self.tool_latency = Histogram(
            "durable_loop_tool_duration_seconds",
            "Duration of one tool call, by tool",
            ["tool"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.approvals_pending = Gauge(
            "durable_loop_approvals_pending",
            "Proposals this worker saw opened minus those it saw settled (sum over workers; "
            "resets when the worker restarts)",
            registry=r,
        )
        self.decisions = Counter(
            "durable_loop_proposal_outcomes",
            "Settled proposals, by status (committed, rejected, expired, conflict, failed)",
            ["status"],
            registry=r,
        )

    def serve(self, port: int, address: str = "127.0.0.1") -> None:
        """Expose ``/metrics`` on a background thread."""
        start_http_server(port, addr=address, registry=self.registry)
