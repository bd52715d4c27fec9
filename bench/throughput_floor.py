"""Throughput against the floor: turns per second of durable-loop's worker and of a bare
Temporal loop of the same activities (``bench.naive_loop``), 100 concurrent sessions by
default, both worker processes with identical worker settings, side by side in one run,
with the worker's and the server's CPU per turn for both.

A turn is one LLM call plus the tool call it asked for; each message is one tool turn and
a final text turn, against a zero-latency scripted endpoint and a no-op tool. Each session
is started by update-with-start with its first message, sends its next ones by Update and
is terminated at the end; durable-loop's sessions through ``SessionClient``, the bare ones
straight through the Temporal client. The loops alternate for ``--rounds`` rounds on one
embedded dev server, and the ratio is of the medians. CPU seconds come from /proc.

    .venv/bin/python -m bench.throughput_floor [--sessions 100] [--messages 3] [--rounds 2]
        [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Literal

from pydantic import BaseModel
from temporalio.client import Client, WithStartWorkflowOperation
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Worker

from bench.harness import (
    ToolTurns,
    cpu_s,
    dev_server,
    machine,
    noop_tools,
    publish,
    server_address,
    server_pid,
    settings_for,
)
from bench.naive_activities import NaiveActivities
from bench.naive_loop import (
    NAIVE_SEND,
    NAIVE_WORKFLOW,
    NaiveReply,
    NaiveSessionInput,
    NaiveSessionWorkflow,
)
from bench.throughput import Level, load_clients
from bench.throughput import measure as measure_durable
from durable_loop.core.contracts import UserMessage
from durable_loop.testing import ScriptedLLM
from durable_loop.worker.builder import WorkerTuning, worker_options
from durable_loop.worker.deps import new_http_client

LoopName = Literal["durable_loop", "bare_temporal"]
TARGET = 0.9
SETTINGS = WorkerTuning(
    max_concurrent_workflow_tasks=200,
    max_concurrent_activities=400,
    max_concurrent_local_activities=200,
    max_cached_workflows=2000,
    workflow_task_pollers=10,
    activity_task_pollers=10,
)
"""The tuned settings of ``bench.throughput`` for both workers; durable-loop's sandbox is
its plugin's default, the bare loop's the SDK's."""
DEFAULT_OUTPUT = Path(__file__).parent / "results" / "throughput_floor.json"


class FloorReport(BaseModel):
    turn: str
    sessions: int
    messages_per_session: int
    settings: WorkerTuning
    levels: list[Level]
    """One per loop and round; ``config`` names the loop."""
    turns_per_s: dict[str, float]
    """Median over the rounds."""
    worker_cpu_ms_per_turn: dict[str, float]
    server_cpu_ms_per_turn: dict[str, float]
    ratio_durable_vs_bare: float | None
    target: float = TARGET
    target_met: bool | None
    machine: dict[str, object]
    wall_s: float


# ------------------------------------------------------------------ bare worker process


async def serve_bare(address: str, queue: str) -> None:
    """The bare loop's worker process: prints ``ready``, runs until stdin says anything."""
    client = await Client.connect(address, data_converter=pydantic_data_converter)
    http = new_http_client()
    worker = Worker(
        client,
        task_queue=queue,
        workflows=[NaiveSessionWorkflow],
        activities=NaiveActivities(http, noop_tools()).all(),  # type: ignore[arg-type]
        **worker_options(SETTINGS),
    )
    try:
        async with worker:
            print("ready", flush=True)
            await asyncio.to_thread(sys.stdin.readline)
    finally:
        await http.aclose()


class BareWorker:
    def __init__(self, address: str, queue: str) -> None:
        self.args = [sys.executable, "-m", "bench.throughput_floor", "--bare-worker"]
        self.args += ["--address", address, "--queue", queue]
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self) -> int:
        self.proc = await asyncio.create_subprocess_exec(
            *self.args, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
        )
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(self.proc.stdout.readline(), 120)
        if line.strip() != b"ready":
            raise RuntimeError(f"WORKER_NOT_READY: {line!r}")
        return self.proc.pid

    async def stop(self) -> None:
        assert self.proc is not None
        await asyncio.wait_for(self.proc.communicate(b"stop\n"), 120)


# ------------------------------------------------------------------ driver side


async def drive_bare(
    clients: list[Client], llm: ScriptedLLM, queue: str, count: int, messages: int
) -> tuple[int, list[str]]:
    model = f"floor-bare-{uuid.uuid4().hex[:6]}"
    llm.script(model, [], then=ToolTurns(1))
    start_input = NaiveSessionInput(
        endpoint=settings_for(llm, model).llm, tools=noop_tools().specs(), max_turns=12
    )

    def ok(result: NaiveReply) -> bool:
        return result.tool_calls == 1 and bool(result.reply)

    async def one(index: int) -> int:
        client = clients[index % len(clients)]
        start: WithStartWorkflowOperation[object, object] = WithStartWorkflowOperation(
            NAIVE_WORKFLOW,
            start_input,
            id=f"floor-bare-{index}-{uuid.uuid4().hex[:6]}",
            task_queue=queue,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        )
        first = await client.execute_update_with_start_workflow(
            NAIVE_SEND, UserMessage(text="message 0"), start_workflow_operation=start,
            result_type=NaiveReply,
        )  # fmt: skip
        done = int(ok(first))
        handle = await start.workflow_handle()
        for m in range(1, messages):
            result = await handle.execute_update(
                NAIVE_SEND, UserMessage(text=f"message {m}"), result_type=NaiveReply
            )
            done += ok(result)
        await handle.terminate("bench done")
        return done

    outcomes = await asyncio.gather(*(one(i) for i in range(count)), return_exceptions=True)
    llm.forget(model)
    errors = [f"{type(o).__name__}: {o}" for o in outcomes if isinstance(o, BaseException)]
    return sum(o for o in outcomes if isinstance(o, int)), errors[:5]


async def measure_bare(
    address: str,
    llm: ScriptedLLM,
    clients: list[Client],
    server: int | None,
    count: int,
    messages: int,
) -> Level:
    queue = f"floor-bare-{count}-{uuid.uuid4().hex[:6]}"
    worker = BareWorker(address, queue)
    pid = await worker.start()
    try:
        cpu_before = cpu_s(pid)
        server_before = cpu_s(server) if server else 0.0
        bench_before = time.process_time()
        started = time.perf_counter()
        completed, errors = await drive_bare(clients, llm, queue, count, messages)
        wall = time.perf_counter() - started
        cpu = cpu_s(pid) - cpu_before
        server_cpu = cpu_s(server) - server_before if server else None
        bench_cpu = time.process_time() - bench_before
    finally:
        await worker.stop()
    turns = max(completed * 2, 1)
    return Level(
        config="bare_temporal",
        sessions=count,
        messages_per_session=messages,
        turns=completed * 2,
        completed_messages=completed,
        failed_messages=count * messages - completed,
        wall_s=round(wall, 2),
        turns_per_s=round(completed * 2 / wall, 1),
        worker_cpu_s_per_turn=round(cpu / turns, 4),
        server_cpu_s_per_turn=round(server_cpu / turns, 4) if server_cpu else None,
        bench_cpu_s_per_turn=round(bench_cpu / turns, 4),
        errors=errors,
    )


async def run(count: int, messages: int, rounds: int) -> list[Level]:
    levels: list[Level] = []
    with tempfile.TemporaryDirectory(prefix="floor-") as tmp, ScriptedLLM() as llm:
        async with dev_server() as env:
            clients = await load_clients(env, count)
            server, address = server_pid(env), server_address(env)
            for index in range(rounds):
                order: list[LoopName] = ["durable_loop", "bare_temporal"]
                if index % 2:
                    order.reverse()
                for loop in order:
                    if loop == "bare_temporal":
                        level = await measure_bare(address, llm, clients, server, count, messages)
                    else:
                        level = await measure_durable(
                            address, llm, Path(tmp), loop, SETTINGS, count, messages, clients,
                            server,
                        )  # fmt: skip
                    print(
                        f"round {index + 1} {loop:<14} {level.turns_per_s:7.1f} turns/s; "
                        f"CPU ms/turn: worker {1000 * level.worker_cpu_s_per_turn:.1f}, server "
                        f"{1000 * (level.server_cpu_s_per_turn or 0):.1f}, driver "
                        f"{1000 * level.bench_cpu_s_per_turn:.1f}; "
                        f"{level.failed_messages} failed {level.errors[:1]}",
                        flush=True,
                    )
                    levels.append(level)
    return levels


def medians(levels: list[Level], value: str) -> dict[str, float]:
    loops = sorted({lv.config for lv in levels})
    return {
        loop: round(
            statistics.median(getattr(lv, value) or 0.0 for lv in levels if lv.config == loop), 4
        )
        for loop in loops
    }


def main(argv: list[str] | None = None) -> FloorReport | None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--messages", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="4 sessions, 2 messages, 1 round")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--bare-worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--address", help=argparse.SUPPRESS)
    parser.add_argument("--queue", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.bare_worker:
        asyncio.run(serve_bare(args.address, args.queue))
        return None
    if args.quick:
        args.sessions, args.messages, args.rounds = 4, 2, 1
    if min(args.sessions, args.messages, args.rounds) < 1:
        parser.error("BAD_ARGUMENT: --sessions, --messages and --rounds must be positive")
    started = time.perf_counter()
    levels = asyncio.run(run(args.sessions, args.messages, args.rounds))
    rate = medians(levels, "turns_per_s")
    worker = {k: round(1000 * v, 2) for k, v in medians(levels, "worker_cpu_s_per_turn").items()}
    server = {k: round(1000 * v, 2) for k, v in medians(levels, "server_cpu_s_per_turn").items()}
    bare = rate.get("bare_temporal")
    ratio = round(rate["durable_loop"] / bare, 3) if bare else None
    report = FloorReport(
        turn="one LLM call plus the tool call it asked for; a message = 1 tool turn + 1 text turn",
        sessions=args.sessions,
        messages_per_session=args.messages,
        settings=SETTINGS,
        levels=levels,
        turns_per_s=rate,
        worker_cpu_ms_per_turn=worker,
        server_cpu_ms_per_turn=server,
        ratio_durable_vs_bare=ratio,
        target_met=ratio >= TARGET if ratio is not None else None,
        machine=machine(),
        wall_s=round(time.perf_counter() - started, 1),
    )
    print(f"durable-loop / bare Temporal turns/s: {ratio} (target >= {TARGET}x)", flush=True)
    publish(report, args.output)
    return report


if __name__ == "__main__":
    main()
