"""Tools that misbehave on purpose, each recording its invocations in the ledger.

* ``transfer``: a side effect (a payment, say), applied once per idempotency key. With
  ``hold_s`` the first invocation waits after applying it: the window in which the harness
  kills the worker, so the retry finds the effect already applied.
* ``hang``: never returns (the per-tool timeout must end it).
* ``explode``: raises (retried, then a TOOL_ERROR envelope).
* ``not_json``: returns a value that is not JSON (NaN).
Plus the workspace tools, so a model can propose facts.
"""

from __future__ import annotations

import asyncio
import time

from pydantic import JsonValue

from durable_loop.chaos.ledger import Ledger
from durable_loop.core.registry import ToolContext, ToolRegistry
from durable_loop.store import StoreConfig
from durable_loop.store.workspace import open_workspace_store
from durable_loop.tools.workspace import workspace_tools

HANG_TIMEOUT_S = 1.0


def chaos_tools(ledger: Ledger) -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool(timeout_s=120.0)
    def transfer(amount: int, ctx: ToolContext, hold_s: float = 0.0) -> dict[str, JsonValue]:
        """Move money: a side effect that must happen once per call."""
        ledger.invoked(ctx, "transfer")
        applied = ledger.apply_once(ctx, "transfer", amount)
        if applied and hold_s > 0:
            time.sleep(hold_s)
        return {"amount": amount, "applied_now": applied, "key": ctx.idempotency_key}

    @registry.tool(timeout_s=HANG_TIMEOUT_S)
    async def hang(ctx: ToolContext) -> str:
        """Look something up (never answers)."""
        await asyncio.to_thread(ledger.invoked, ctx, "hang")
        await asyncio.sleep(3600)
        return "unreachable"

    @registry.tool()
    def explode(ctx: ToolContext) -> str:
        """Check the weather (always raises)."""
        ledger.invoked(ctx, "explode")
        raise RuntimeError("chaos: the tool blew up")

    @registry.tool()
    def not_json(ctx: ToolContext) -> float:
        """Measure something (returns NaN, which is not JSON)."""
        ledger.invoked(ctx, "not_json")
        return float("nan")

    return registry


def registry_for(db_url: str) -> ToolRegistry:
    workspace = workspace_tools(open_workspace_store(StoreConfig(url=db_url)))
    return chaos_tools(Ledger(db_url)).merged(workspace)


def registry() -> ToolRegistry:
    """``--tools durable_loop.chaos.tools:registry``: on the worker's store
    (DURABLE_LOOP_DB_URL, as the worker itself reads it)."""
    from durable_loop.worker.settings import WorkerSettings

    return registry_for(WorkerSettings.load().db_url)
