"""``durable-loop eval --suite bfcl``: BFCL entries as durable-loop sessions.

Each entry becomes a scenario: its question is the message (a system message in the
entry becomes the session's system prompt; a multi-turn entry sends its turns one by one),
its functions are the only tools offered, and its check is BFCL's scoring of the calls the
session executed. Jobs are built by the same planners as the other evals (offline:
scripted behaviours playing BFCL's answer; live or --local: real models, baseline and
production strategies), then run batch by batch, one worker per batch of entries whose
tool names do not clash.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from durable_loop.core.tools import ToolSpec
from durable_loop.evals.bfcl.answers import answer_policy
from durable_loop.evals.bfcl.entries import (
    BfclEntry,
    categories,
    category_of,
    chosen,
    entries,
    is_multi_turn,
    no_call_expected,
    sample,
)
from durable_loop.evals.bfcl.harness import bfcl_environment
from durable_loop.evals.bfcl.multi_turn import ApiCalls, run_multi_turn_job, score_multi_turn
from durable_loop.evals.bfcl.multi_turn import answer_policy as multi_turn_policy
from durable_loop.evals.bfcl.package import Bfcl
from durable_loop.evals.bfcl.score import score
from durable_loop.evals.bfcl.tools import CallLog, batch_registry, batches, entry_specs
from durable_loop.evals.runner import EvalTarget, Job, run_jobs
from durable_loop.evals.scenario import Scenario
from durable_loop.evals.schema import RunRecord


@dataclass(frozen=True)
class BfclSelection:
    categories: str = "all"
    sample: int | None = None
    """Entries per category (None: all of them)."""
    seed: int = 0
    entries: tuple[str, ...] = ()
    """Chosen entry ids (their categories; ``categories`` and ``sample`` are then unused)."""


@dataclass(frozen=True)
class EntryRun:
    """An entry with its tools and its scenario (whose tools, offered by name, are the
    entry's functions)."""

    entry: BfclEntry
    specs: list[ToolSpec]
    scenario: Scenario


@dataclass
class Recorders:
    """Where the tools of a run write: executed calls (single-turn), and the multi-turn
    sessions' entries and call lines."""

    calls: CallLog = dataclasses.field(default_factory=CallLog)
    api: ApiCalls = dataclasses.field(default_factory=ApiCalls)


def entry_run(bfcl: Bfcl, entry: BfclEntry, recorders: Recorders) -> EntryRun:
    specs = entry_specs(bfcl, entry)
    multi_turn = is_multi_turn(entry.category)

    def check(trace: Any) -> list[str]:
        if multi_turn:
            found = score_multi_turn(bfcl, entry, recorders.api, trace.session_id)
        else:
            found = score(bfcl, entry, recorders.calls.of(trace.session_id))
        return found.problems(entry)

    scenario = Scenario(
        name=entry.category,
        prompt=entry.turns[0] if multi_turn else entry.user_text,
        policy=multi_turn_policy(entry, specs) if multi_turn else answer_policy(entry, specs),
        check=check,
        uses_tools=not no_call_expected(entry.category),
        extra_tools=lambda: batch_registry(specs, recorders.calls.recorder),
        entry=entry.id,
    )
    return EntryRun(entry, specs, scenario)


def select(bfcl: Bfcl, selection: BfclSelection, recorders: Recorders) -> list[EntryRun]:
    if selection.entries:
        by_category: dict[str, list[str]] = {}
        for entry_id in selection.entries:
            by_category.setdefault(category_of(entry_id), []).append(entry_id)
        picked = [
            e for category, ids in by_category.items() for e in chosen(entries(bfcl, category), ids)
        ]
    else:
        picked = [
            e
            for category in categories(selection.categories)
            for e in sample(entries(bfcl, category), selection.sample, selection.seed)
        ]
    return [entry_run(bfcl, entry, recorders) for entry in picked]


def with_system_prompt(job: Job, runs: dict[int, EntryRun]) -> Job:
    prompt = runs[id(job.scenario)].entry.system_prompt
    if prompt is None:
        return job
    settings = job.settings.model_copy(update={"system_prompt": prompt})
    return dataclasses.replace(job, settings=settings)


async def run_entry_jobs(
    bfcl: Bfcl,
    runs: list[EntryRun],
    jobs: list[Job],
    recorders: Recorders,
    *,
    kind: str,
    environ: dict[str, str],
    parallel: int = 1,
    on_record: Callable[[RunRecord], None] | None = None,
) -> list[RunRecord]:
    """Run ``jobs`` (built from the runs' scenarios) batch by batch: single-turn entries
    one message each, multi-turn entries turn by turn."""
    by_scenario = {id(run.scenario): run for run in runs}
    records: list[RunRecord] = []
    async with bfcl_environment(kind, environ) as env:
        for multi_turn in (False, True):
            kept = [run for run in runs if is_multi_turn(run.entry.category) == multi_turn]
            for group in batches([run.specs for run in kept]):
                members = {id(kept[i].scenario) for i in group}
                batch_jobs = [
                    with_system_prompt(job, by_scenario)
                    for job in jobs
                    if id(job.scenario) in members
                ]
                if not batch_jobs:
                    continue
                specs = [spec for i in group for spec in kept[i].specs]
                if multi_turn:
                    registry = batch_registry(specs, partial(recorders.api.tool, bfcl))
                else:
                    registry = batch_registry(specs, recorders.calls.recorder)
                async with env.batch(registry) as target:
                    if multi_turn:
                        records += await _run_multi_turn(
                            batch_jobs, by_scenario, recorders.api, target, parallel, on_record
                        )
                    else:
                        records += await run_jobs(
                            batch_jobs, target, parallel=parallel, on_record=on_record
                        )
    return records


async def _run_multi_turn(
    jobs: list[Job],
    by_scenario: dict[int, EntryRun],
    api: ApiCalls,
    target: EvalTarget,
    parallel: int,
    on_record: Callable[[RunRecord], None] | None,
) -> list[RunRecord]:
    gate = asyncio.Semaphore(max(1, parallel))

    async def one(job: Job) -> RunRecord:
        async with gate:
            record = await run_multi_turn_job(job, by_scenario[id(job.scenario)].entry, api, target)
        if on_record is not None:
            on_record(record)
        return record

    return list(await asyncio.gather(*(one(job) for job in jobs)))
