"""Helpers for tool-approval tests: a gated payment tool that records every execution."""

from __future__ import annotations

import base64
import threading
from dataclasses import dataclass, field
from datetime import timedelta

from temporalio.client import WorkflowHistory
from temporalio.testing import WorkflowEnvironment

from durable_loop.core.approvals import ApprovalSettings
from durable_loop.core.config import RuntimeConfig, SessionSettings
from durable_loop.core.registry import ToolContext, ToolRegistry
from durable_loop.testing import ScriptedLLM
from tests.conftest import settings_for


@dataclass
class Payments:
    """Every execution of ``pay`` (arguments and idempotency key), thread-safe."""

    made: list[tuple[int, str, str]] = field(default_factory=list)
    lookups: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def registry(self) -> ToolRegistry:
        registry = ToolRegistry()

        @registry.tool(requires_approval=True)
        def pay(amount: int, to: str, ctx: ToolContext) -> str:
            """Pay an amount to someone."""
            with self._lock:
                self.made.append((amount, to, ctx.idempotency_key))
            return f"paid {amount} to {to}"

        @registry.tool()
        def lookup(query: str) -> str:
            """Look something up."""
            with self._lock:
                self.lookups.append(query)
            return f"found {query}"

        @registry.tool()
        def refund(amount: int) -> str:
            """Refund an amount (gated by the session's settings in some tests)."""
            with self._lock:
                self.made.append((-amount, "refund", ""))
            return f"refunded {amount}"

        return registry


def hour(env: WorkflowEnvironment) -> timedelta:
    """One simulated hour: real on the time-skipping server, a second on the dev server."""
    return timedelta(hours=1) if env.supports_time_skipping else timedelta(seconds=1)


def approval_settings(
    llm: ScriptedLLM,
    model: str,
    env: WorkflowEnvironment,
    *,
    ttl_hours: float = 24.0,
    runtime: RuntimeConfig | None = None,
    **approvals: object,
) -> SessionSettings:
    settings = settings_for(llm, model, runtime=runtime)
    gate = ApprovalSettings.model_validate(
        {"ttl_s": ttl_hours * hour(env).total_seconds(), **approvals}
    )
    return settings.model_copy(update={"approvals": gate})


def payload_text(histories: list[WorkflowHistory]) -> str:
    """Every payload's data in the histories, decoded (history JSON holds it base64)."""
    found: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if "metadata" in node and isinstance(node.get("data"), str):
                found.append(base64.b64decode(node["data"]).decode("utf-8", "replace"))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for history in histories:
        walk(history.to_json_dict())
    return "\n".join(found)
