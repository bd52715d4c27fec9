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
            "Duration of one LLM activity attempt that answered (the llm_call span), by model",
            ["model"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.llm_failures = Counter(
            "durable_loop_llm_failures",
            "LLM activity attempts that failed, by error code and model",
            ["code", "model"],
            registry=r,
        )
        self.input_tokens = Counter(
            "durable_loop_llm_input_tokens",
            "Input tokens the provider reported, by model",
            ["model"],
            registry=r,
        )
        self.output_tokens = Counter(
            "durable_loop_llm_output_tokens",
            "Output tokens the provider reported, by model",
            ["model"],
            registry=r,
        )
        self.fallbacks = Counter(
            "durable_loop_llm_fallbacks",
            "Turns that moved to the next model of the fallback chain, by the model that "
            "failed, the model tried next and the failure's error code",
            ["from_model", "to_model", "reason"],
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
