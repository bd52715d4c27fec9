"""Running the scenarios: on a rig given by the caller (tests) or on a fresh one."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from durable_loop.chaos import (
    scenarios_approvals,
    scenarios_cancel,
    scenarios_faults,
    scenarios_once,
    scenarios_processes,
    scenarios_upgrade,
    scenarios_workers,
)
from durable_loop.chaos.report import ChaosReport, ScenarioResult
from durable_loop.chaos.rig import LOAD_SESSIONS, ChaosRig
from durable_loop.chaos.scenario import SCENARIOS, run_scenario
from durable_loop.cli.codes import CliCode
from durable_loop.core.errors import DurableLoopError
from durable_loop.testing import ScriptedLLM

MODULES = (
    scenarios_processes,
    scenarios_faults,
    scenarios_approvals,
    scenarios_once,
    scenarios_cancel,
    scenarios_workers,
    scenarios_upgrade,
)  # importing them registers the scenarios


class UnknownScenario(DurableLoopError, ValueError):
    show_code = True

    def __init__(self, unknown: list[str]) -> None:
        known = ", ".join(SCENARIOS)
        super().__init__(CliCode.UNKNOWN_SCENARIO, f"{', '.join(unknown)} (known: {known})")


def select(names: list[str] | None) -> list[str]:
    if not names:
        return list(SCENARIOS)
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        raise UnknownScenario(unknown)
    return names


async def run_on(rig: ChaosRig, names: list[str] | None = None) -> list[ScenarioResult]:
    return [await run_scenario(rig, name) for name in select(names)]


async def run_chaos(
    names: list[str] | None = None,
    workdir: Path | None = None,
    db_url: str | None = None,
    load_sessions: int = LOAD_SESSIONS,
    sticky_timeout_s: float | None = None,
) -> ChaosReport:
    """A dev server, a worker subprocess and a scripted endpoint of its own; every scenario
    in ``names`` (default: all), in order. The store is SQLite in the work dir unless
    ``db_url`` names another (PostgreSQL)."""
    selected = select(names)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="durable-loop-chaos-") as tmp, ScriptedLLM() as llm:
        rig = ChaosRig(
            workdir or Path(tmp),
            llm,
            db_url=db_url,
            load_sessions=load_sessions,
            sticky_timeout_s=sticky_timeout_s,
        )
        await rig.start()
        try:
            results = await run_on(rig, selected)
        finally:
            await rig.close()
    return ChaosReport.of(results, time.monotonic() - started)
