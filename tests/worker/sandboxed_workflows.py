"""Workflows for the sandbox tests (workflow classes must live in an importable module):
one reads the wall clock, which the sandbox must refuse, and counts its runs in module
state, which the sandbox must give every run afresh; one reads it through a helper."""

from __future__ import annotations

import datetime
from typing import Literal

from pydantic import BaseModel
from temporalio import workflow
from temporalio.worker.workflow_sandbox import RestrictedWorkflowAccessError

from tests.worker.sandboxed_helpers import wall_clock_iso

RUNS: list[str] = []


class SandboxProbe(BaseModel):
    clock: Literal["refused", "allowed"]
    runs_seen_by_module: int


@workflow.defn
class ClockReadingWorkflow:
    @workflow.run
    async def run(self) -> SandboxProbe:
        RUNS.append(workflow.info().run_id)
        try:
            datetime.datetime.now()
        except RestrictedWorkflowAccessError:
            clock: Literal["refused", "allowed"] = "refused"
        else:
            clock = "allowed"
        return SandboxProbe(clock=clock, runs_seen_by_module=len(RUNS))


class HelperClock(BaseModel):
    read: bool


@workflow.defn
class HelperClockWorkflow:
    """Reads the clock through a helper module: refused unless the helper is passed
    through."""

    @workflow.run
    async def run(self) -> HelperClock:
        return HelperClock(read=bool(wall_clock_iso()))
