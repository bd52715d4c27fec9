"""Do sessions polled by their status Query still replay? temporalio 1.32 to 1.35 (its core):
a Query answered while a local activity's result is pending completes the workflow task
with the activity's marker before the workflow has seen the result, so a
``workflow.patched`` first asked right after that local activity records its marker one
workflow task late, and replay fails with TMPRL1100. durable-loop asks those patches as a
run starts instead (``durable_loop/workflows/run_start_patches.py``, gate patch
``patches-at-run-start``). Re-run this when temporalio is upgraded or a patch is added.

For each scenario, N real sessions on the embedded dev server with P tasks polling the
session's status Query all the time it runs, then every run of each session replayed with
``durable_loop.testing.replay_failures``, side by side in one run, the columns interleaved
session by session on one worker:

* **gate_off**: the session workflow without ``ask_patches_at_run_start`` (its run is
  what durable-loop was before the gate), polled;
* **gate_on**: the current workflow code, polled;
* **not_polled**: gate off, no poller (the control: without Queries nothing fails).

Every history is replayed by the current code, as a worker after an upgrade would replay
it: a gate-off history has no ``patches-at-run-start`` marker, so its replay answers False
to the gate and asks each patch where it always did. Whether the switch took effect is
checked on the histories (``gate_switch_ok``: the gate's marker is in the first workflow
task of every gate-on session and of no other).

Scenarios (the patch first asked right after a local activity when the gate is off):

* **versioned_idle**: a versioned worker (deployment, pinned); the session starts idle,
  then two messages: ``upgrade-on-continue-as-new``, asked right after the tool catalog;
* **local_done**: ``add`` is a local tool, recoveries ``repeated_call_guard`` and
  ``finalize_when_done``: ``finalize-when-done``, right after the local tool's result;
* **held_repair**: a turn calls ``add`` with broken JSON and holds ``pay`` for approval,
  ``repair_invalid_arguments`` repairs it: ``argument-repair``, right after reading the
  held calls.

Measured before the gate (temporalio 1.35.0, 4 pollers, 25 sessions): 7, 6 and 5 replay
failures; with it, none; without polling, none.

    .venv/bin/python -m bench.replay_under_queries [--runs 25] [--pollers 4]
        [--scenarios versioned_idle,local_done,held_repair]
        [--columns gate_off,gate_on,not_polled] [--out PATH] [-v]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.metadata
import shlex
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from temporalio.testing import WorkflowEnvironment

from bench.harness import dev_server, machine, publish, settings_for
from bench.polled_sessions import (
    COLUMNS,
    FAILURE_CHARS,
    SCENARIOS,
    Column,
    GateSwitch,
    Scenario,
    SessionOutcome,
    drive,
    patch_markers,
    poll,
    short_failure,
)
from durable_loop.chaos.scenarios_upgrade import make_current
from durable_loop.client.sessions import SessionClient
from durable_loop.core import names
from durable_loop.core.results import RunResult
from durable_loop.store import StoreConfig, open_store
from durable_loop.testing import ScriptedLLM, fetch_histories, replay_failures
from durable_loop.worker.builder import WorkerDeps, build_worker, new_http_client
from durable_loop.workflows import run_start_patches

DEFAULT_RUNS = 25
DEFAULT_POLLERS = 4
DEFAULT_OUTPUT = Path(__file__).parent / "results" / "replay_under_queries.json"
SESSION_TIMEOUT_S = 90.0
"""A session whose live workflow task fails on nondeterminism can take ~30 s to finish."""
LLM_TIMEOUT_S = 10.0


class Cell(BaseModel):
    scenario: str
    column: Column
    sessions: int
    replay_failures: int
    queries_answered: int
    queries_failed: int
    caller_errors: int
    slowest_s: float
    gate_recorded: int
    failure_samples: list[str]


class ReplayUnderQueriesReport(BaseModel):
    benchmark: str = "replay_under_queries"
    what: str = " ".join((__doc__ or "").split("\n\n")[0].split())
    temporalio: str
    date: str
    command: str
    runs: int
    pollers: int
    scenarios: list[str]
    columns: list[Column]
    gate_switch_ok: bool
    """Every gate-on session recorded the gate patch at run start, no other did."""
    cells: list[Cell]
    sessions: list[SessionOutcome]
    machine: dict[str, object]
    wall_s: float


async def one_session(
    rig: Rig, scenario: Scenario, column: Column, index: int, pollers: int
) -> SessionOutcome:
    sid = f"ruq-{scenario.name}-{column}-{index}-{uuid.uuid4().hex[:6]}"
    workflow_id = names.session_workflow_id(sid)
    if column != "gate_on":
        rig.gate.off.add(workflow_id)
    model = f"m-{sid}"
    rig.llm.script(model, scenario.script())
    settings = settings_for(rig.llm, model, scenario.runtime(), timeout_s=LLM_TIMEOUT_S)
    started = time.monotonic()
    handle = await rig.sessions.start(sid, settings)
    stop = asyncio.Event()
    count = pollers if column != "not_polled" else 0
    polling = [asyncio.create_task(poll(rig.sessions, sid, stop)) for _ in range(count)]
    results: list[RunResult] = []
    error = None
    try:
        async with asyncio.timeout(SESSION_TIMEOUT_S):
            results = await drive(rig.sessions, scenario, sid)
            await handle.result()
    except Exception as err:  # reported, not raised: the histories are still replayed
        error = f"{type(err).__name__}: {err}"[:FAILURE_CHARS]
        with contextlib.suppress(Exception):
            await handle.terminate("replay_under_queries: session did not finish")
    finally:
        stop.set()
        polled = await asyncio.gather(*polling)
    wall = time.monotonic() - started
    histories = await fetch_histories(rig.env.client, workflow_id)
    failures = await replay_failures(histories)
    rig.llm.forget(model)
    rig.gate.off.discard(workflow_id)
    markers = [patch_markers(h) for h in histories]
    return SessionOutcome(
        scenario=scenario.name,
        column=column,
        index=index,
        session_id=sid,
        replay_ok=not failures,
        failure=short_failure(next(iter(failures.values()))) if failures else None,
        error=error,
        queries=sum(p.answered for p in polled),
        queries_failed=sum(p.failed for p in polled),
        runs=len(histories),
        gate_recorded=bool(markers) and (1, run_start_patches.PATCH_ID) in markers[0],
        replies=[f"{r.status} {r.recoveries}" for r in results],
        late_markers=[
            f"{run}/{task} {p}" for run, m in enumerate(markers) for task, p in m if task > 1
        ],
        wall_s=round(wall, 2),
    )


@dataclass
class Rig:
    env: WorkflowEnvironment
    llm: ScriptedLLM
    gate: GateSwitch
    sessions: SessionClient


@contextlib.asynccontextmanager
async def scenario_worker(
    env: WorkflowEnvironment, llm: ScriptedLLM, gate: GateSwitch, scenario: Scenario, tmp: Path
) -> AsyncIterator[Rig]:
    """durable-loop's own worker for one scenario, on a fresh queue and SQLite file; on a
    deployment made current when the scenario is versioned."""
    queue = f"ruq-{scenario.name}-{uuid.uuid4().hex[:8]}"
    store = open_store(StoreConfig.sqlite_file(tmp / f"{queue}.db"))
    http = new_http_client()
    deps = WorkerDeps(store=store, registry=scenario.tools(), http=http, environ={})
    deployment = f"ruq-{uuid.uuid4().hex[:6]}" if scenario.versioned else None
    worker = build_worker(
        env.client,
        deps,
        task_queue=queue,
        deployment_name=deployment,
        build_id="A" if deployment else None,
    )
    try:
        async with worker:
            if deployment:
                await make_current(env.client, deployment, "A")
            sessions = SessionClient(env.client, task_queue=queue, search_attributes=False)
            yield Rig(env=env, llm=llm, gate=gate, sessions=sessions)
    finally:
        await http.aclose()
        await store.close()


async def run_all(
    args: argparse.Namespace, console: Console, progress: Progress
) -> list[SessionOutcome]:
    outcomes: list[SessionOutcome] = []
    gate = GateSwitch()
    with (
        tempfile.TemporaryDirectory(prefix="replay-under-queries-") as tmp,
        ScriptedLLM() as llm,
        gate.installed(),
    ):
        async with dev_server() as env:
            for name in args.scenarios:
                scenario = SCENARIOS[name]
                task = progress.add_task(name, total=args.runs * len(args.columns))
                async with scenario_worker(env, llm, gate, scenario, Path(tmp)) as rig:
                    for index in range(args.runs):
                        for column in args.columns:
                            outcome = await one_session(rig, scenario, column, index, args.pollers)
                            outcomes.append(outcome)
                            progress.advance(task)
                            if args.verbose:
                                progress.console.print(
                                    session_line(outcome), highlight=False, soft_wrap=True
                                )
                cells = [c for c in summarize(outcomes) if c.scenario == name]
                progress.console.print(scenario_line(name, cells))
    return outcomes


# ---------------------------------------------------------------- reporting


def session_line(o: SessionOutcome) -> str:
    verdict = "replay ok" if o.replay_ok else f"[red]REPLAY FAILED[/red] {o.failure}"
    line = (
        f"{o.scenario} {o.column} #{o.index}: {verdict}, {o.queries} queries, "
        f"{o.runs} run(s), replies {o.replies}, late markers {o.late_markers}, {o.wall_s}s"
    )
    if o.queries_failed:
        line += f", [red]{o.queries_failed} queries failed[/red]"
    if o.error:
        line += f" [yellow]{o.error}[/yellow]"
    return line


def scenario_line(name: str, cells: list[Cell]) -> str:
    parts = [f"{c.column} {c.replay_failures}/{c.sessions}" for c in cells]
    return f"{name}: replay failures " + ", ".join(parts)


def summarize(outcomes: list[SessionOutcome]) -> list[Cell]:
    keys = dict.fromkeys((o.scenario, o.column) for o in outcomes)
    cells = []
    for scenario, column in keys:
        mine = [o for o in outcomes if (o.scenario, o.column) == (scenario, column)]
        cells.append(
            Cell(
                scenario=scenario,
                column=column,
                sessions=len(mine),
                replay_failures=sum(not o.replay_ok for o in mine),
                queries_answered=sum(o.queries for o in mine),
                queries_failed=sum(o.queries_failed for o in mine),
                caller_errors=sum(o.error is not None for o in mine),
                slowest_s=max(o.wall_s for o in mine),
                gate_recorded=sum(o.gate_recorded for o in mine),
                failure_samples=list(dict.fromkeys(o.failure for o in mine if o.failure))[:3],
            )
        )
    return cells


def gate_switch_ok(outcomes: list[SessionOutcome]) -> bool:
    return all(o.gate_recorded == (o.column == "gate_on") for o in outcomes)


def results_table(cells: list[Cell], columns: list[Column], pollers: int) -> Table:
    out = Table(title=f"Replay failures / sessions, {pollers} status-Query pollers")
    out.add_column("scenario")
    headers = {"gate_off": "gate off", "gate_on": "gate on", "not_polled": "not polled (gate off)"}
    short = {"gate_off": "off", "gate_on": "on", "not_polled": "not polled"}
    for column in columns:
        out.add_column(headers[column], justify="right")
    polled = [c for c in columns if c != "not_polled"]
    if polled:
        which = " / ".join(short[c] for c in polled)
        out.add_column(f"queries answered ({which})", justify="right")
        out.add_column(f"queries failed ({which})", justify="right")
    out.add_column(f"slowest session s ({' / '.join(short[c] for c in columns)})", justify="right")
    for scenario in dict.fromkeys(c.scenario for c in cells):
        by_column = {c.column: c for c in cells if c.scenario == scenario}
        row = [scenario]
        for column in columns:
            cell = by_column.get(column)
            if cell is None:
                row.append("-")
                continue
            text = f"{cell.replay_failures}/{cell.sessions}"
            row.append(f"[red]{text}[/red]" if cell.replay_failures else text)
        if polled:
            row.append(" / ".join(f"{by_column[c].queries_answered:,}" for c in polled))
            row.append(" / ".join(str(by_column[c].queries_failed) for c in polled))
        row.append(" / ".join(f"{by_column[c].slowest_s:.1f}" for c in columns))
        out.add_row(*row)
    return out


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS, help="sessions per cell")
    parser.add_argument(
        "--pollers", type=int, default=DEFAULT_POLLERS, help="status-Query pollers per session"
    )
    parser.add_argument(
        "--scenarios", default=",".join(SCENARIOS), help="comma-separated, of: %(default)s"
    )
    parser.add_argument(
        "--columns", default=",".join(COLUMNS), help="comma-separated, of: %(default)s"
    )
    parser.add_argument("--out", "--output", dest="output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per session")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("BAD_ARGUMENT: --runs must be positive")
    if args.pollers < 1:
        parser.error("BAD_ARGUMENT: --pollers must be positive (not_polled is the control)")
    args.scenarios = [s.strip() for s in args.scenarios.split(",") if s.strip()]
    unknown = [s for s in args.scenarios if s not in SCENARIOS]
    if unknown or not args.scenarios:
        parser.error(f"BAD_SCENARIO: {unknown or 'none'}; known: {', '.join(SCENARIOS)}")
    columns = [c.strip() for c in args.columns.split(",") if c.strip()]
    unknown = [c for c in columns if c not in COLUMNS]
    if unknown or not columns:
        parser.error(f"BAD_COLUMN: {unknown or 'none'}; known: {', '.join(COLUMNS)}")
    args.columns = [c for c in COLUMNS if c in columns]
    return args


def main(argv: list[str] | None = None) -> ReplayUnderQueriesReport:
    args = parse_args(argv)
    command = shlex.join(
        [".venv/bin/python", "-m", "bench.replay_under_queries", *(argv or sys.argv[1:])]
    )
    console = Console(file=sys.stdout, width=140)
    version = importlib.metadata.version("temporalio")
    console.print(
        f"temporalio {version}: {', '.join(args.scenarios)} x {', '.join(args.columns)}, "
        f"{args.runs} sessions each, {args.pollers} pollers"
    )
    started = time.perf_counter()
    progress = Progress(
        TextColumn("{task.description:>15}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
    )
    with progress:
        outcomes = asyncio.run(run_all(args, console, progress))
    cells = summarize(outcomes)
    report = ReplayUnderQueriesReport(
        temporalio=version,
        date=datetime.now(UTC).isoformat(timespec="seconds"),
        command=command,
        runs=args.runs,
        pollers=args.pollers,
        scenarios=args.scenarios,
        columns=args.columns,
        gate_switch_ok=gate_switch_ok(outcomes),
        cells=cells,
        sessions=outcomes,
        machine=machine(),
        wall_s=round(time.perf_counter() - started, 1),
    )
    console.print(results_table(cells, args.columns, args.pollers))
    for cell in cells:
        for sample in cell.failure_samples:
            console.print(
                f"[red]{cell.scenario} {cell.column}[/red]: {sample}",
                highlight=False,
                soft_wrap=True,
            )
    if not report.gate_switch_ok:
        console.print(
            "[red]gate switch did not take effect[/red]: a gate-on session lacks the "
            f"{run_start_patches.PATCH_ID} marker at run start, or another one has it"
        )
    publish(report, args.output, console.print)
    return report


if __name__ == "__main__":
    main()
