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
import json
import re
import shlex
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, get_args

from pydantic import BaseModel
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from temporalio import workflow
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowHistory, WorkflowQueryFailedError
from temporalio.testing import WorkflowEnvironment

from bench.harness import dev_server, machine, publish, settings_for
from durable_loop.chaos.scenarios_upgrade import make_current
from durable_loop.client.sessions import SessionClient
from durable_loop.core import names
from durable_loop.core.config import RuntimeConfig
from durable_loop.core.registry import ToolContext, ToolRegistry
from durable_loop.core.results import RunResult
from durable_loop.store import StoreConfig, open_store
from durable_loop.testing import Reply, ScriptedLLM, fetch_histories, replay_failures, reply
from durable_loop.tools.ensembles import Ensemble, EnsembleDefaults, registry_from
from durable_loop.worker.builder import WorkerDeps, build_worker, new_http_client
from durable_loop.workflows import run_start_patches
from durable_loop.workflows import session as session_module

Column = Literal["gate_off", "gate_on", "not_polled"]
COLUMNS: tuple[Column, ...] = get_args(Column)
DEFAULT_RUNS = 25
DEFAULT_POLLERS = 4
DEFAULT_OUTPUT = Path(__file__).parent / "results" / "replay_under_queries.json"
SESSION_TIMEOUT_S = 90.0
"""A session whose live workflow task fails on nondeterminism can take ~30 s to finish."""
IDLE_S = 0.3
"""versioned_idle: the session is idle when its catalog is loaded."""
LLM_TIMEOUT_S = 10.0
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
