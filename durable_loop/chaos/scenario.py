"""One scenario's bookkeeping: faults injected, sessions and whether each ended as expected."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from durable_loop.chaos.checks import WorkflowsFor
from durable_loop.chaos.report import ScenarioResult
from durable_loop.chaos.rig import ChaosRig
from durable_loop.core.contracts import RunResult


class Tracker:
    def __init__(self, name: str, description: str) -> None:
        self.result = ScenarioResult(name=name, description=description, faults={})
        self.started = time.monotonic()
        self.workflows_for: WorkflowsFor | None = None
        """Set by a scenario whose runs replay against other code than today's."""

    def fault(self, kind: str, count: int = 1) -> None:
        self.result.faults[kind] = self.result.faults.get(kind, 0) + count

    def session(self, session_id: str) -> str:
        self.result.sessions.append(session_id)
        return session_id

    def expect(self, condition: bool, message: str) -> bool:
        if not condition:
            self.result.expectation_failures.append(message)
        return condition

    def ended(self, session_id: str, result: RunResult, *, reply: str | None = None) -> bool:
        """The message completed (with ``reply`` when given): the session survived."""
        ok = result.status == "completed" and (reply is None or result.reply == reply)
        if self.expect(ok, f"{session_id}: {result.status} {result.error} reply={result.reply!r}"):
            self.result.survived += 1
        return ok

    def survived(self, session_id: str, ok: bool, why: str) -> None:
        if self.expect(ok, f"{session_id}: {why}"):
            self.result.survived += 1


ScenarioFn = Callable[[ChaosRig, Tracker], Awaitable[None]]
SCENARIOS: dict[str, tuple[str, ScenarioFn]] = {}
SCENARIO_TIMEOUT_S = 240.0


def scenario(name: str, description: str) -> Callable[[ScenarioFn], ScenarioFn]:
    def register(fn: ScenarioFn) -> ScenarioFn:
        SCENARIOS[name] = (description, fn)
        return fn

    return register


async def run_scenario(rig: ChaosRig, name: str) -> ScenarioResult:
    """Run one scenario, then check every session it started (store, facts, replay,
    duplicates); a crash of the scenario itself is reported, not raised."""
    description, fn = SCENARIOS[name]
    tracker = Tracker(name, description)
    await rig.start_worker()
    try:
        await asyncio.wait_for(fn(rig, tracker), SCENARIO_TIMEOUT_S)
    except Exception as err:
        tracker.result.error = f"{type(err).__name__}: {err}"
        await rig.start_worker()
    result = tracker.result
    for session_id in result.sessions:
        result.checks.append(await rig.check(session_id, tracker.workflows_for))
    counts = await asyncio.to_thread(rig.ledger.counts, result.sessions)
    result.tool_invocations = counts.invocations
    result.side_effects = counts.effects
    result.duplicates = counts.duplicates
    result.wall_s = round(time.monotonic() - tracker.started, 1)
    return result
