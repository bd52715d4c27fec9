"""One ``durable-loop eval --suite bfcl`` run: select entries, plan the jobs as the other
evals do, run them batch by batch with a progress bar, write the report and BFCL's scores."""

from __future__ import annotations

import os
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from durable_loop.cli.local_llm import DEFAULT_ALIAS
from durable_loop.evals.behaviours import behaviour
from durable_loop.evals.bfcl.package import load_bfcl
from durable_loop.evals.bfcl.report import scores, write_scores
from durable_loop.evals.bfcl.suite import BfclSelection, Recorders, run_entry_jobs, select
from durable_loop.evals.plan import live_jobs, offline_jobs
from durable_loop.evals.report import build_summary, report_dir, write_report
from durable_loop.evals.run import EvalOptions, live_plan, local_model, strategies
from durable_loop.evals.runner import Job
from durable_loop.evals.scenario import Scenario
from durable_loop.evals.schema import Summary
from durable_loop.testing.scripted import ScriptedLLM

OFFLINE_BEHAVIOUR = "well_behaved"


def offline_bfcl_jobs(opts: EvalOptions, scenarios: list[Scenario], llm: ScriptedLLM) -> list[Job]:
    """Scripted behaviours playing BFCL's answers (``--behaviours``; all means the one
    that calls tools as providers do: the harness's own check, not a benchmark)."""
    names = [OFFLINE_BEHAVIOUR] if opts.behaviours in ("", "all") else opts.behaviours.split(",")
    jobs: list[Job] = []
    for name in names:
        b = behaviour(name.strip())
        for strategy in strategies(opts.strategies):
            update = b.broken_under if strategy == "baseline" else {**b.broken_under, **b.fix}
            jobs += offline_jobs(
                scenarios, b, llm, strategy=strategy, update=update, trials=opts.trials
            )
    return jobs


async def execute_bfcl(
    opts: EvalOptions, selection: BfclSelection, console: Console | None = None
) -> tuple[Path, Summary]:
    console = console or Console(stderr=True)
    bfcl = load_bfcl()
    started = datetime.now(UTC)
    recorders = Recorders()
    runs = select(bfcl, selection, recorders)
    scenarios = [run.scenario for run in runs]
    with ExitStack() as stack:
        if opts.local:
            base = stack.enter_context(local_model(opts, console))
            opts.base_url, opts.provider = base, "openai"
            if opts.models == "tag:stable":
                opts.models = DEFAULT_ALIAS
            if opts.profiles == "default":
                opts.profiles = "catalog"
        live = opts.live or opts.local
        if live:
            plan, applicable = live_plan(opts)
            jobs = live_jobs(plan, scenarios, applicable)
            kind = "dev"
        else:
            llm = stack.enter_context(ScriptedLLM())
            jobs = offline_bfcl_jobs(opts, scenarios, llm)
            kind = "timeskip"
        columns = (
            TextColumn("[progress.description]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
        )
        with Progress(*columns, console=console, transient=False) as progress:
            task = progress.add_task("bfcl sessions", total=len(jobs))
            records = await run_entry_jobs(
                bfcl,
                runs,
                jobs,
                recorders,
                kind=kind,
                environ=dict(os.environ),
                parallel=opts.jobs,
                on_record=lambda _: progress.advance(task),
            )
    summary = build_summary(
        records,
        mode="live" if live else "offline",
        scenarios=list(dict.fromkeys(run.entry.category for run in runs)),
        trials=opts.trials,
        started_at=started.isoformat(timespec="seconds"),
    )
    directory = report_dir(opts.out, started)
    write_report(directory, records, summary)
    write_scores(directory, scores(bfcl, records))
    return directory, summary
