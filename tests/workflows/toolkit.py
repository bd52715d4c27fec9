"""Tools for session tests that record every execution, so a test can prove what ran."""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass, field

from durable_loop.core.registry import ToolContext, ToolFailure, ToolRegistry


@dataclass
class Execution:
    name: str
    args: dict[str, object]
    attempt: int
    started: float
    finished: float = 0.0


@dataclass
class ToolLog:
    """Thread-safe record of tool executions (sync tools run in worker threads)."""

    executions: list[Execution] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self, name: str, args: dict[str, object], ctx: ToolContext) -> Execution:
        execution = Execution(name=name, args=args, attempt=ctx.attempt, started=time.monotonic())
        with self._lock:
            self.executions.append(execution)
        return execution

    def names(self) -> list[str]:
        with self._lock:
            return [e.name for e in self.executions]

    def count(self, name: str) -> int:
        return self.names().count(name)


def recording_tools(log: ToolLog) -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool()
    def add(a: int, b: int, ctx: ToolContext) -> int:
        """Add two integers."""
        log.start("add", {"a": a, "b": b}, ctx).finished = time.monotonic()
        return a + b

    @registry.tool()
    async def nap(seconds: float, label: str, ctx: ToolContext) -> str:
        """Sleep for a while, then return the label."""
        execution = log.start("nap", {"seconds": seconds, "label": label}, ctx)
        await asyncio.sleep(seconds)
        execution.finished = time.monotonic()
        return label

    @registry.tool()
    def flaky(reason: str, ctx: ToolContext) -> str:
        """Always fails with a coded error."""
        log.start("flaky", {"reason": reason}, ctx)
        raise ToolFailure("TOOL_ERROR", f"flaky failed: {reason}")

    @registry.tool()
    def blob(size: int, ctx: ToolContext) -> str:
        """Return a string of ``size`` characters."""
        log.start("blob", {"size": size}, ctx)
        return "x" * size

    @registry.tool()
    def vault(ctx: ToolContext) -> str:
        """A tool tests mask away from the model."""
        log.start("vault", {}, ctx)
        return "secret"

    return registry
