"""Tools that misbehave on purpose, each recording its invocations in the ledger.

* ``transfer``: a side effect (a payment, say), applied once per idempotency key. With
  ``hold_s`` the first invocation waits after applying it: the window in which the harness
  kills the worker, so the retry finds the effect already applied.
* ``hang``: never returns (the per-tool timeout must end it).
* ``explode``: raises (retried, then a TOOL_ERROR envelope).
* ``not_json``: returns a value that is not JSON (NaN).
* ``notify``: ``effect="once"`` without a key (a message goes out each time its body runs)
  and no ``reconcile``; ``notify_checked``: the same with a ``reconcile`` that looks for the
  message in the ledger (``check="broken"``: the check itself raises). ``hold_s`` waits
  after the message went out, ``hold_before_s`` before it: the windows for a kill.
Plus the workspace tools, so a model can propose facts.
"""

from __future__ import annotations

import asyncio
import time

from pydantic import JsonValue

from durable_loop.chaos.ledger import Ledger
from durable_loop.core.registry import Reconciled, ToolContext, ToolRegistry
from durable_loop.core.retry import RetrySettings
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

    @registry.tool(effect="once", timeout_s=120.0)
    def notify(text: str, ctx: ToolContext, hold_s: float = 0.0) -> str:
        """Send a message (it cannot take an idempotency key)."""
        ledger.invoked(ctx, "notify")
        ledger.apply_each(ctx, "notify")
        if hold_s > 0:
            time.sleep(hold_s)
        return f"sent {text!r}"

    def outbox_check(arguments: dict[str, JsonValue], ctx: ToolContext) -> Reconciled:
        if arguments.get("check") == "broken":
            raise ConnectionError("chaos: the outbox cannot be read")
        if ledger.applied(ctx, "notify_checked"):
            return Reconciled.done(f"sent {arguments.get('text')!r} (found in the outbox)")
        return Reconciled.not_done()

    @registry.tool(
        effect="once",
        reconcile=outbox_check,
        timeout_s=120.0,
        retry=RetrySettings(maximum_attempts=6, initial_interval_s=0.5, maximum_interval_s=2.0),
    )
    def notify_checked(
        text: str,
        ctx: ToolContext,
        hold_s: float = 0.0,
        hold_before_s: float = 0.0,
        check: str = "outbox",
    ) -> str:
        """Send a message (it cannot take a key; its outbox can be checked)."""
        ledger.invoked(ctx, "notify_checked")
        if hold_before_s > 0:
            time.sleep(hold_before_s)
        ledger.apply_each(ctx, "notify_checked")
        if hold_s > 0:
            time.sleep(hold_s)
        return f"sent {text!r}"

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
