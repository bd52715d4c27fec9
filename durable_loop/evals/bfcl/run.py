"""One ``durable-loop eval --suite bfcl`` run: select entries, plan the jobs as the other
evals do, run them batch by batch with a progress bar, write the report and BFCL's scores."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from rich.console import Console

from durable_loop.evals.bfcl.package import load_bfcl
from durable_loop.evals.bfcl.report import scores, write_scores
from durable_loop.evals.bfcl.suite import BfclSelection, Recorders, run_entry_jobs, select
from durable_loop.evals.run import EvalOptions, Suite, behaviour_jobs, run_suite
from durable_loop.evals.runner import Job
from durable_loop.evals.scenario import Scenario
from durable_loop.evals.schema import RunRecord, Summary
from durable_loop.testing.scripted import ScriptedLLM

OFFLINE_BEHAVIOUR = "well_behaved"


def offline_bfcl_jobs(opts: EvalOptions, scenarios: list[Scenario], llm: ScriptedLLM) -> list[Job]:
    """Scripted behaviours playing BFCL's answers (``--behaviours``; all means the one
    that calls tools as providers do: the harness's own check, not a benchmark)."""
    names = [OFFLINE_BEHAVIOUR] if opts.behaviours in ("", "all") else opts.behaviours.split(",")
    return behaviour_jobs(names, scenarios, llm, opts)


async def execute_bfcl(
    opts: EvalOptions, selection: BfclSelection, console: Console | None = None
) -> tuple[Path, Summary]:
    bfcl = load_bfcl()
    recorders = Recorders()
    runs = select(bfcl, selection, recorders)
    scenarios = [run.scenario for run in runs]

    async def in_batches(
        jobs: list[Job], kind: str, on_record: Callable[[RunRecord], None]
    ) -> list[RunRecord]:
        return await run_entry_jobs(
            bfcl,
            runs,
            jobs,
            recorders,
            kind=kind,
            environ=dict(os.environ),
            parallel=opts.jobs,
            on_record=on_record,
        )

    suite = Suite(
        label="bfcl sessions",
        scenarios=scenarios,
        offline_jobs=lambda llm: offline_bfcl_jobs(opts, scenarios, llm),
        run_jobs=in_batches,
        summary_scenarios=list(dict.fromkeys(run.entry.category for run in runs)),
        written=lambda directory, records: write_scores(directory, scores(bfcl, records)),
    )
    return await run_suite(opts, suite, console)
