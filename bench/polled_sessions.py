"""The sessions ``replay_under_queries`` runs: the gate switch, the three scenarios, a
session polled by its status Query, and what its histories show."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal, get_args

from pydantic import BaseModel
from temporalio import workflow
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowHistory, WorkflowQueryFailedError

from durable_loop.client.sessions import SessionClient
from durable_loop.core.config import RuntimeConfig
from durable_loop.core.registry import ToolContext, ToolRegistry
from durable_loop.core.results import RunResult
from durable_loop.testing import Reply, reply
from durable_loop.tools.ensembles import Ensemble, EnsembleDefaults, registry_from
from durable_loop.workflows import run_start_patches
from durable_loop.workflows import session as session_module

Column = Literal["gate_off", "gate_on", "not_polled"]
COLUMNS: tuple[Column, ...] = get_args(Column)

IDLE_S = 0.3
"""versioned_idle: the session is idle when its catalog is loaded."""
FAILURE_CHARS = 300


# ---------------------------------------------------------------- the gate switch


class GateSwitch:
    """Runs the session workflow without ``ask_patches_at_run_start`` for the workflow ids
    in :attr:`off`, with it for every other.

    The session module imports the function from ``run_start_patches``, a helper module
    the worker's sandbox passes through (``durable_loop.worker.sandbox``), each time it is
    imported for a run: replacing it there reaches every sandboxed run; replacing it in
    the host's ``session`` module too covers a worker that passes all of durable_loop
    through. Whether it took effect is read from the histories, not assumed."""

    def __init__(self) -> None:
        self.off: set[str] = set()
        self._original = run_start_patches.ask_patches_at_run_start

    def ask(self) -> None:
        if workflow.info().workflow_id not in self.off:
            self._original()

    @contextlib.contextmanager
    def installed(self) -> Iterator[GateSwitch]:
        modules = (run_start_patches, session_module)
        name = self._original.__name__
        for module in modules:
            setattr(module, name, self.ask)
        try:
            yield self
        finally:
            for module in modules:
                setattr(module, name, self._original)


# ---------------------------------------------------------------- scenarios


def maths_tools(local: bool) -> ToolRegistry:
    maths = Ensemble("maths", defaults=EnsembleDefaults(local=local, timeout_s=5))

    @maths.tool()
    def add(a: int, b: int, ctx: ToolContext) -> int:
        """Add two integers."""
        return a + b

    return registry_from([maths])


def approval_tools() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool()
    def add(a: int, b: int, ctx: ToolContext) -> int:
        """Add two integers."""
        return a + b

    @registry.tool(requires_approval=True)
    def pay(amount: int, ctx: ToolContext) -> str:
        """Pay an amount."""
        return f"paid {amount}"

    return registry


@dataclass(frozen=True)
class Scenario:
    name: str
    tools: Callable[[], ToolRegistry]
    script: Callable[[], list[Reply]]
    texts: tuple[str, ...]
    recoveries: tuple[str, ...] = ()
    versioned: bool = False
    idle_first: bool = False

    def runtime(self) -> RuntimeConfig:
        return (
            RuntimeConfig(recoveries=list(self.recoveries)) if self.recoveries else RuntimeConfig()
        )


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario(
            name="versioned_idle",
            tools=lambda: maths_tools(local=False),
            script=lambda: [reply.text("hello"), reply.text("again")],
            texts=("hi", "once more"),
            versioned=True,
            idle_first=True,
        ),
        Scenario(
            name="local_done",
            tools=lambda: maths_tools(local=True),
            script=lambda: [
                reply.tool_call("add", {"a": 37, "b": 43}),
                reply.text("37 + 43 is 80."),
            ],
            texts=("add 37 and 43",),
            recoveries=("repeated_call_guard", "finalize_when_done"),
        ),
        Scenario(
            name="held_repair",
            tools=approval_tools,
            script=lambda: [
                reply.tool_calls(("add", "{broken", "c1"), ("pay", {"amount": 5}, "c2")),
                reply.text('{"a": 1, "b": 2}'),
                reply.text("added; paid nothing"),
            ],
            texts=("add 1 and 2 and pay 5",),
            recoveries=("repeated_call_guard", "repair_invalid_arguments"),
        ),
    )
}


# ---------------------------------------------------------------- results


class SessionOutcome(BaseModel):
    scenario: str
    column: Column
    index: int
    session_id: str
    replay_ok: bool
    failure: str | None = None
    """The first replay failure, shortened."""
    error: str | None = None
    """What the caller saw go wrong (a timeout, a failed send), if anything."""
    queries: int
    """Status Queries answered while it ran."""
    queries_failed: int
    """Status Queries that failed (WorkflowQueryFailedError): on a gate-off session, the
    live worker replaying the run to answer it, and failing as the replay here does."""
    runs: int
    gate_recorded: bool
    """``patches-at-run-start`` is in the first workflow task of its first run."""
    replies: list[str]
    """Each reply's status and recoveries."""
    late_markers: list[str]
    """Patch markers recorded after the first workflow task: ``run/wft patch``."""
    wall_s: float


# ---------------------------------------------------------------- reading histories


def patch_markers(history: WorkflowHistory) -> list[tuple[int, str]]:
    """(workflow task, patch id) of every patch marker; the first workflow task is 1."""
    out: list[tuple[int, str]] = []
    task = 1
    for event in history.events:
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
            task += 1
        if event.event_type == EventType.EVENT_TYPE_MARKER_RECORDED:
            details = event.marker_recorded_event_attributes.details
            if "patch-data" in details:
                data = json.loads(details["patch-data"].payloads[0].data)
                out.append((task - 1, data["id"]))
    return out


def short_failure(message: str) -> str:
    found = re.search(r"\[TMPRL\d+\][^\"]*?!", message)
    return found.group(0) if found else message[:FAILURE_CHARS]


# ---------------------------------------------------------------- driving sessions


@dataclass
class Polled:
    answered: int = 0
    failed: int = 0


async def poll(sessions: SessionClient, sid: str, stop: asyncio.Event) -> Polled:
    polled = Polled()
    while not stop.is_set():
        try:
            await sessions.status(sid)
            polled.answered += 1
        except WorkflowQueryFailedError:
            polled.failed += 1
            await asyncio.sleep(0.01)
        except Exception:  # e.g. the server's RPC, busy: keep asking
            await asyncio.sleep(0.01)
    return polled


async def drive(sessions: SessionClient, scenario: Scenario, sid: str) -> list[RunResult]:
    if scenario.idle_first:
        await asyncio.sleep(IDLE_S)
    results = []
    for i, text in enumerate(scenario.texts):
        results.append(await sessions.send(sid, text, message_id=f"m{i}"))
    await sessions.close(sid)
    return results
