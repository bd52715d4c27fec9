"""CLI latency: ``durable-loop`` commands against the stock ``temporal`` CLI doing the
nearest equivalent and against the floor for a Python CLI (a bare script that imports
``temporalio.client``, connects and makes the same RPCs), side by side in one run.

One embedded dev server (search attributes registered), one worker in this process, a
session holding a tool call for approval, one with a pending proposal and a few idle ones.
Each round runs every command of every case once, in an order that rotates per round; a
case's time is the median wall time of its process (start to exit).

Targets: ``--help`` and ``--version`` at most 0.5x the floor (the cheapest floor: connect
and one query); every command that talks to Temporal at most 1.3x its own floor.

    .venv/bin/python -m bench.cli_latency [--rounds 9] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from pydantic import BaseModel
from temporalio.testing import WorkflowEnvironment

from bench.harness import dev_server, machine, median, publish, settings_for
from durable_loop.cli.binaries import temporal_cli
from durable_loop.client.search_attributes import ensure_registered
from durable_loop.client.sessions import SessionClient
from durable_loop.core.registry import ToolRegistry
from durable_loop.store import StoreConfig, open_store
from durable_loop.store.workspace import open_workspace_store
from durable_loop.testing import RecordedRequest, Reply, ScriptedLLM, reply
from durable_loop.tools.workspace import workspace_tools
from durable_loop.worker.builder import build_worker
from durable_loop.worker.deps import WorkerDeps, new_http_client

DEFAULT_OUTPUT = Path(__file__).parent / "results" / "cli_latency.json"
HELD, PROPOSING, IDLE = "bench-held", "bench-proposal", "bench-idle"
MODEL, QUEUE = "bench-model", "bench-cli"
PENDING_QUERY = 'WorkflowType = "Session" AND DurableLoopPendingProposals > 0'
HELP_TARGET, COMMAND_TARGET = 0.5, 1.3

FLOOR_HEAD = """\
import asyncio, os, sys
from temporalio.client import Client

def ask(handle, name):
    return handle.query(name)

async def main():
    client = await Client.connect(sys.argv[1])
"""
FLOOR_TAIL = """
asyncio.run(main())
os._exit(0)  # as durable-loop exits: the SDK's threads can abort a finalizing interpreter
"""
TYPER_HEAD = """\
import asyncio, os, sys
from typing import Annotated
import typer
from pydantic import BaseModel, ConfigDict
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter

class Answer(BaseModel):
    model_config = ConfigDict(extra="allow")

def ask(handle, name):
    return handle.query(name, result_type=Answer)

async def main():
    client = await Client.connect(sys.argv[1], data_converter=pydantic_data_converter)
"""
TYPER_TAIL = """
def command(
    address: str,
    rest: Annotated[list[str], typer.Argument()],
    namespace: Annotated[str, typer.Option("--namespace")] = "default",
    api_key: Annotated[str | None, typer.Option("--api-key")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    asyncio.run(main())

try:
    typer.run(command)
except SystemExit as done:
    os._exit(done.code if isinstance(done.code, int) else 1)
os._exit(0)
"""
"""The floor for a Typer CLI that decodes answers into Pydantic models: the same RPCs,
with the libraries every such CLI loads (Typer builds a Pydantic adapter per parameter)."""
FLOORS: dict[str, str] = {
    "query": """\
    await ask(client.get_workflow_handle(sys.argv[2]), sys.argv[3])
""",
    "status": """\
    handle = client.get_workflow_handle(sys.argv[2])
    await asyncio.gather(*(ask(handle, q) for q in ("status", "tool_approvals", "proposals")))
""",
    "pending": """\
    async def both(workflow_id):
        handle = client.get_workflow_handle(workflow_id)
        return await asyncio.gather(ask(handle, "tool_approvals"), ask(handle, "proposals"))
    ids = [w.id async for w in client.list_workflows(sys.argv[2])]
    await asyncio.gather(*(both(i) for i in ids))
""",
    "history": """\
    await client.get_workflow_handle(sys.argv[2]).fetch_history()
""",
}


class Case(BaseModel):
    name: str
    durable_loop: list[str]
    temporal: list[str]
    floor: str | None = None
    floor_args: list[str] = []


class CaseResult(BaseModel):
    name: str
    durable_loop_s: float
    temporal_s: float
    floor_s: float | None
    vs_floor: float
    vs_temporal: float
    target: str
    met: bool
    typer_floor_s: float | None
    vs_typer_floor: float | None
    """durable-loop over the floor of a Typer + Pydantic CLI (``TYPER_HEAD``)."""
    durable_loop_cpu_s: float
    floor_cpu_s: float | None
    vs_floor_cpu: float
    """The same ratio of CPU seconds (user + system): steadier on a busy machine."""
    durable_loop_runs: list[float]


class CliLatencyReport(BaseModel):
    cases: list[CaseResult]
    help_floor_s: float
    help_floor_cpu_s: float
    rounds: int
    all_met: bool
    setup: str
    machine: dict[str, object]
    wall_s: float


def cases(address: str) -> list[Case]:
    held, query = f"session-{HELD}", ["workflow", "query", "--address", address]
    return [
        Case(name="--help", durable_loop=["--help"], temporal=["--help"]),
        Case(name="--version", durable_loop=["--version"], temporal=["--version"]),
        Case(
            name="pending",
            durable_loop=["pending"],
            temporal=["workflow", "list", "--address", address, "--query", PENDING_QUERY],
            floor="pending",
            floor_args=[PENDING_QUERY],
        ),
        Case(
            name="tool-calls list",
            durable_loop=["tool-calls", "list", HELD],
            temporal=[*query, "--workflow-id", held, "--type", "tool_approvals"],
            floor="query",
            floor_args=[held, "tool_approvals"],
        ),
        Case(
            name="status",
            durable_loop=["status", HELD],
            temporal=[*query, "--workflow-id", held, "--type", "status"],
            floor="status",
            floor_args=[held],
        ),
        Case(
            name="trace",
            durable_loop=["trace", HELD],
            temporal=["workflow", "show", "--address", address, "--workflow-id", held],
            floor="history",
            floor_args=[held],
        ),
        Case(
            name="trace --no-store",
            durable_loop=["trace", HELD, "--no-store"],
            temporal=["workflow", "show", "--address", address, "--workflow-id", held],
            floor="history",
            floor_args=[held],
        ),
    ]


def scripted(request: RecordedRequest) -> Reply:
    """Ask for a payment (held for approval) or propose a fact; idle sessions just answer."""
    if request.messages and request.messages[-1].get("role") == "tool":
        return reply.text("Done; it waits for a person.")
    text = str(request.messages[-1].get("content", ""))
    if "pay" in text:
        return reply.tool_call("pay", {"amount": 250, "to": "acme"}, call_id="call_pay")
    if "propose" in text:
        change = {"op": "add", "path": "/budget", "value": 100}
        return reply.tool_call("facts_propose", {"changes": [change], "summary": "a budget"})
    return reply.text("Hello.")


@asynccontextmanager
async def sessions_waiting(workdir: Path, idle: int) -> AsyncIterator[tuple[str, str]]:
    """(address, store url) of a dev server whose sessions wait as described above."""
    store_url = StoreConfig.sqlite_file(workdir / "store.db").url
    with ScriptedLLM() as llm:
        async with dev_server() as env, _worker(env, llm, store_url, idle) as address:
            yield address, store_url


@asynccontextmanager
async def _worker(
    env: WorkflowEnvironment, llm: ScriptedLLM, store_url: str, idle: int
) -> AsyncIterator[str]:
    """A worker with a gated ``pay`` tool and the workspace tools, and the sessions."""
    assert await ensure_registered(env.client)
    llm.script(MODEL, [], then=scripted)
    registry = ToolRegistry()

    @registry.tool(requires_approval=True)
    def pay(amount: int, to: str) -> str:
        """Pay an amount to someone."""
        return f"paid {amount} to {to}"

    workspace = open_workspace_store(StoreConfig(url=store_url))
    store, http = open_store(StoreConfig(url=store_url)), new_http_client()
    tools = registry.merged(workspace_tools(workspace))
    deps = WorkerDeps(store=store, registry=tools, http=http, environ={})
    sessions = SessionClient(env.client, task_queue=QUEUE, search_attributes=True)
    try:
        async with build_worker(env.client, deps, task_queue=QUEUE):
            settings = settings_for(llm, MODEL)
            await sessions.start_and_send(HELD, settings, "please pay acme")
            await sessions.start_and_send(PROPOSING, settings, "propose a budget")
            for index in range(idle):
                await sessions.start_and_send(f"{IDLE}-{index}", settings, "hi")
            await asyncio.sleep(2)  # visibility catches up
            yield env.client.service_client.config.target_host
    finally:
        await http.aclose()
        await store.close()
        await workspace.close()


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds from start to exit, and CPU seconds (user + system) of the process:
    on a shared machine the CPU time says what the command costs when the wall time
    also holds the waits for a busy CPU."""
    started = time.perf_counter()
    process = subprocess.Popen(
        argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL
    )
    assert process.stderr is not None
    errors = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    process.stderr.close()
    if process.returncode != 0:
        raise RuntimeError(f"{argv} exited {process.returncode}: {errors.decode()[-800:]}")
    return elapsed, usage.ru_utime + usage.ru_stime


Samples = dict[str, dict[str, list[float]]]
"""case -> side (durable_loop, temporal, floor) -> one value per round."""


def measure(
    address: str, store_url: str, rounds: int, only: list[str] | None, say
) -> tuple[Samples, Samples]:
    """(wall seconds, CPU seconds) of every side of every case, ``rounds`` times."""
    bin_dir = Path(sys.executable).parent
    env = {
        **os.environ,
        "TEMPORAL_ADDRESS": address,
        "DURABLE_LOOP_DB_URL": store_url,
        "COLUMNS": "80",
    }
    walls: Samples = {}
    cpus: Samples = {}
    all_cases = [c for c in cases(address) if only is None or c.name in only]
    floor_argv = {
        name: [sys.executable, "-c", FLOOR_HEAD + body + FLOOR_TAIL, address]
        for name, body in FLOORS.items()
    }
    typer_argv = {
        name: [sys.executable, "-c", TYPER_HEAD + body + TYPER_TAIL, address]
        for name, body in FLOORS.items()
    }
    for index in range(rounds):
        for case in all_cases:
            sides: dict[str, list[str]] = {
                "durable_loop": [str(bin_dir / "durable-loop"), *case.durable_loop],
                "temporal": [str(temporal_cli()), *case.temporal],
            }
            if case.floor is not None:
                sides["floor"] = [*floor_argv[case.floor], *case.floor_args]
                sides["typer_floor"] = [*typer_argv[case.floor], *case.floor_args]
            order = list(sides)
            shift = index % len(order)
            for side in order[shift:] + order[:shift]:
                wall, used = timed(sides[side], env)
                walls.setdefault(case.name, {}).setdefault(side, []).append(wall)
                cpus.setdefault(case.name, {}).setdefault(side, []).append(used)
        say(f"round {index + 1}/{rounds} done")
    return walls, cpus


def summarize(walls: Samples, cpus: Samples, rounds: int, wall_s: float) -> CliLatencyReport:
    floors = {name: median(sides["floor"]) for name, sides in walls.items() if "floor" in sides}
    floor_cpus = {name: median(sides["floor"]) for name, sides in cpus.items() if "floor" in sides}
    help_floor = min(floors.values()) if floors else float("nan")
    help_floor_cpu = min(floor_cpus.values()) if floor_cpus else float("nan")
    results = []
    for name, sides in walls.items():
        mine, theirs = median(sides["durable_loop"]), median(sides["temporal"])
        mine_cpu = median(cpus[name]["durable_loop"])
        floor, floor_cpu = floors.get(name), floor_cpus.get(name)
        typer_floor = median(sides["typer_floor"]) if "typer_floor" in sides else None
        talks = floor is not None
        ratio = mine / (floor if floor is not None else help_floor)
        limit = COMMAND_TARGET if talks else HELP_TARGET
        results.append(
            CaseResult(
                name=name,
                durable_loop_s=round(mine, 3),
                temporal_s=round(theirs, 3),
                floor_s=round(floor, 3) if floor is not None else None,
                vs_floor=round(ratio, 2),
                vs_temporal=round(mine / theirs, 2),
                target=f"<= {limit}x {'its floor' if talks else 'the cheapest floor'}",
                met=ratio <= limit,
                typer_floor_s=round(typer_floor, 3) if typer_floor is not None else None,
                vs_typer_floor=round(mine / typer_floor, 2) if typer_floor is not None else None,
                durable_loop_cpu_s=round(mine_cpu, 3),
                floor_cpu_s=round(floor_cpu, 3) if floor_cpu is not None else None,
                vs_floor_cpu=round(
                    mine_cpu / (floor_cpu if floor_cpu is not None else help_floor_cpu), 2
                ),
                durable_loop_runs=[round(r, 3) for r in sides["durable_loop"]],
            )
        )
    return CliLatencyReport(
        cases=results,
        help_floor_s=round(help_floor, 3),
        help_floor_cpu_s=round(help_floor_cpu, 3),
        rounds=rounds,
        all_met=all(r.met for r in results),
        setup="embedded dev server, one in-process worker, a held tool call, a pending "
        "proposal and idle sessions; each process timed from start to exit",
        machine=machine(),
        wall_s=round(wall_s, 1),
    )


def table(report: CliLatencyReport) -> list[str]:
    lines = [
        f"{'command':<17}{'durable-loop':>13}{'temporal':>9}{'floor':>7}{'typer fl.':>10}"
        f"{'x floor':>8}{'(cpu)':>7}{'x typer fl.':>12}{'x temporal':>11}  target"
    ]
    for r in report.cases:
        floor = f"{r.floor_s:.3f}" if r.floor_s is not None else "-"
        typer_floor = f"{r.typer_floor_s:.3f}" if r.typer_floor_s is not None else "-"
        vs_typer = f"{r.vs_typer_floor:.2f}" if r.vs_typer_floor is not None else "-"
        mark = "met" if r.met else "MISSED"
        lines.append(
            f"{r.name:<17}{r.durable_loop_s:>13.3f}{r.temporal_s:>9.3f}{floor:>7}"
            f"{typer_floor:>10}{r.vs_floor:>8.2f}{r.vs_floor_cpu:>7.2f}{vs_typer:>12}"
            f"{r.vs_temporal:>11.2f}  {r.target} ({mark})"
        )
    lines.append(
        f"cheapest floor (connect + one query): {report.help_floor_s:.3f} s wall, "
        f"{report.help_floor_cpu_s:.3f} s CPU; seconds are medians of {report.rounds} rounds"
    )
    return lines


def main(argv: list[str] | None = None) -> CliLatencyReport:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--idle", type=int, default=3, help="idle sessions besides the two")
    parser.add_argument("--quick", action="store_true", help="3 rounds")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument(
        "--only", type=lambda text: text.split(","), default=None, help="case names, with commas"
    )
    args = parser.parse_args(argv)
    rounds = 3 if args.quick else args.rounds
    started = time.perf_counter()

    async def run() -> tuple[Samples, Samples]:
        with tempfile.TemporaryDirectory(prefix="cli-latency-") as tmp:
            async with sessions_waiting(Path(tmp), args.idle) as (address, store_url):
                return await asyncio.to_thread(
                    measure, address, store_url, rounds, args.only, lambda s: print(s, flush=True)
                )

    walls, cpus = asyncio.run(run())
    report = summarize(walls, cpus, rounds, time.perf_counter() - started)
    for line in table(report):
        print(line)
    publish(report, args.output)
    return report


if __name__ == "__main__":
    main()
