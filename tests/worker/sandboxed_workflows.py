"""A workflow for the sandbox tests (workflow classes must live in an importable module):
it reads the wall clock, which the sandbox must refuse, and counts its runs in module
state, which the sandbox must give every run afresh."""

from __future__ import annotations

import datetime
from typing import Literal

from pydantic import BaseModel
from temporalio import workflow
from temporalio.worker.workflow_sandbox import RestrictedWorkflowAccessError

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
