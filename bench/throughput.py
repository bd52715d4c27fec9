"""Throughput: turns per second with 1, 10, 100 and 1,000 concurrent sessions on ONE worker
process (a real ``durable-loop worker`` subprocess), with SDK-default worker settings and
with tuned ones, side by side in one run.

A turn is one LLM call plus the tool call it asked for; each message is one tool turn and
a final text turn (2 turns), against a zero-latency scripted endpoint and a no-op tool.
Every session is created by update-with-start and then sends its next messages by Update.
The worker's CPU seconds per turn are read from /proc, so a CPU-bound worker shows as one.

    .venv/bin/python -m bench.throughput [--sessions 1,10,100,1000] [--quick]
        [--tuned '{"max_cached_workflows": 2000, ...}']
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import tempfile
import time
import uuid
from pathlib import Path

from pydantic import BaseModel, ValidationError
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from bench.harness import (
    ToolTurns,
    cpu_s,
    dev_server,
    machine,
    publish,
    server_address,
    server_pid,
    settings_for,
    tuning_args,
)
from durable_loop.chaos.processes import WorkerProcess
from durable_loop.client.sessions import SessionClient
from durable_loop.store import StoreConfig
from durable_loop.testing import ScriptedLLM
from durable_loop.testing.scripted import RecordedRequest, Reply
from durable_loop.worker.builder import WorkerTuning

TOOLS = "bench.harness:noop_tools"
TARGET_AT_100 = 3.0
DEFAULT_LEVELS = (1, 10, 100, 1000)
TUNED = WorkerTuning(
    max_concurrent_workflow_tasks=200,
    max_concurrent_activities=400,
    max_concurrent_local_activities=200,
    max_cached_workflows=2000,
    workflow_task_pollers=10,
    activity_task_pollers=10,
    sandbox_passthrough=True,
)
DEFAULT_OUTPUT = Path(__file__).parent / "results" / "throughput.json"


class Level(BaseModel):
    config: str
    sessions: int
    messages_per_session: int
    turns: int
    completed_messages: int
    failed_messages: int
    wall_s: float
    turns_per_s: float
    worker_cpu_s_per_turn: float
    server_cpu_s_per_turn: float | None
    bench_cpu_s_per_turn: float
    """This process: the client driving the sessions and the scripted endpoint."""
    cpu_ceiling_turns_per_s: float | None = None
    """The most turns/s this machine's cores could give at this level's CPU cost per turn
    (worker + server + driver), were they busy with nothing else."""
    errors: list[str] = []


class ThroughputReport(BaseModel):
    turn: str
    llm_latency_ms: int = 0
    configs: dict[str, WorkerTuning]
    levels: list[Level]
    ratio_tuned_vs_defaults: dict[int, float]
    ratio_tuned_ceiling_vs_defaults: dict[int, float]
    """The tuned worker's CPU ceiling over what the defaults reached: no setting that keeps
    the CPU cost per turn can beat this ratio on this machine."""
    target_at_100: float = TARGET_AT_100
    target_met: bool | None
    machine: dict[str, object]
    wall_s: float


def messages_for(sessions: int, override: int | None) -> int:
    return override or max(3, 30 // sessions)


class Delayed:
    """A scripted model that answers after ``latency_s``, as a real endpoint would."""

    def __init__(self, model: ToolTurns, latency_s: float) -> None:
        self.model = model
        self.latency_s = latency_s

    def __call__(self, request: RecordedRequest) -> Reply:
        return dataclasses.replace(self.model(request), delay_s=self.latency_s)


async def drive(
    sessions: list[SessionClient],
    llm: ScriptedLLM,
    count: int,
    messages: int,
    label: str,
    latency_s: float = 0.0,
) -> tuple[int, list[str]]:
    model = f"tp-{label}-{uuid.uuid4().hex[:6]}"
    llm.script(model, [], then=Delayed(ToolTurns(1), latency_s) if latency_s else ToolTurns(1))
    settings = settings_for(llm, model)

    async def one(index: int) -> int:
        sid = f"tp-{label}-{index}-{uuid.uuid4().hex[:6]}"
        done = 0
        client = sessions[index % len(sessions)]
        result = await client.start_and_send(sid, settings, "message 0")
        done += result.status == "completed"
        for m in range(1, messages):
            result = await client.send(sid, f"message {m}")
            done += result.status == "completed"
        await client.handle(sid).terminate("bench done")
        return done

    outcomes = await asyncio.gather(*(one(i) for i in range(count)), return_exceptions=True)
    llm.forget(model)
    errors = [f"{type(o).__name__}: {o}" for o in outcomes if isinstance(o, BaseException)]
    return sum(o for o in outcomes if isinstance(o, int)), errors[:5]


async def measure(
    address: str,
    llm: ScriptedLLM,
    workdir: Path,
    config: str,
    tuning: WorkerTuning,
    count: int,
    messages: int,
    clients: list[Client],
    server: int | None,
    latency_s: float = 0.0,
) -> Level:
    queue = f"tp-{config}-{count}-{uuid.uuid4().hex[:6]}"
    db = StoreConfig.sqlite_file(workdir / f"{queue}.db").url
    worker = WorkerProcess(address, queue, db, workdir, tuning_args(tuning), tools=TOOLS)
    await worker.start()
    sessions = [SessionClient(c, task_queue=queue, search_attributes=False) for c in clients]
    try:
        cpu_before = cpu_s(worker.pid)
        server_before = cpu_s(server) if server else 0.0
        bench_before = time.process_time()
        started = time.perf_counter()
        completed, errors = await drive(
            sessions, llm, count, messages, f"{config}-{count}", latency_s
        )
        wall = time.perf_counter() - started
        cpu = cpu_s(worker.pid) - cpu_before
        server_cpu = cpu_s(server) - server_before if server else None
        bench_cpu = time.process_time() - bench_before
    finally:
        await asyncio.to_thread(worker.stop)
    turns = completed * 2
    expected = count * messages
    per_turn = (cpu + (server_cpu or 0.0) + bench_cpu) / max(turns, 1)
    return Level(
        config=config,
        sessions=count,
        messages_per_session=messages,
        turns=turns,
        completed_messages=completed,
        failed_messages=expected - completed,
        wall_s=round(wall, 2),
        turns_per_s=round(turns / wall, 1),
        worker_cpu_s_per_turn=round(cpu / max(turns, 1), 4),
        server_cpu_s_per_turn=round(server_cpu / max(turns, 1), 4) if server_cpu else None,
        bench_cpu_s_per_turn=round(bench_cpu / max(turns, 1), 4),
        cpu_ceiling_turns_per_s=round((os.cpu_count() or 1) / per_turn, 1)
        if server_cpu and turns
        else None,
        errors=errors,
    )


SESSIONS_PER_CLIENT = 64


async def load_clients(env: WorkflowEnvironment, sessions: int) -> list[Client]:
    """One client connection per 64 sessions: each in-flight Update is an open gRPC stream,
    and spreading them keeps the driver from being what limits the measurement."""
    extra = [
        await Client.connect(server_address(env), data_converter=pydantic_data_converter)
        for _ in range(-(-sessions // SESSIONS_PER_CLIENT) - 1)
    ]
    return [env.client, *extra]


async def run(args: argparse.Namespace) -> list[Level]:
    configs = {"defaults": WorkerTuning(), "tuned": args.tuned}
    levels: list[Level] = []
    with tempfile.TemporaryDirectory(prefix="throughput-") as tmp, ScriptedLLM() as llm:
        async with dev_server() as env:
            clients = await load_clients(env, max(args.sessions))
            server = server_pid(env)
            for count in args.sessions:
                messages = messages_for(count, args.messages)
                for index, (name, tuning) in enumerate(configs.items()):
                    order = list(configs.items())
                    if count % 2:  # alternate which config goes first
                        order.reverse()
                    name, tuning = order[index]
                    level = await measure(
                        server_address(env),
                        llm,
                        Path(tmp),
                        name,
                        tuning,
                        count,
                        messages,
                        clients,
                        server,
                        args.llm_latency_ms / 1000,
                    )
                    print(
                        f"{name:>8} {count:>5} sessions x {messages} messages: "
                        f"{level.turns_per_s:8.1f} turns/s, {level.wall_s:6.1f}s, "
                        f"CPU-ms/turn: worker {1000 * level.worker_cpu_s_per_turn:.1f}, "
                        f"server {1000 * (level.server_cpu_s_per_turn or 0):.1f}, "
                        f"bench {1000 * level.bench_cpu_s_per_turn:.1f} "
                        f"(CPU ceiling {level.cpu_ceiling_turns_per_s} turns/s); "
                        f"{level.failed_messages} failed",
                        flush=True,
                    )
                    levels.append(level)
    return levels


def ratios(levels: list[Level]) -> dict[int, float]:
    by = {(lv.config, lv.sessions): lv.turns_per_s for lv in levels}
    return {
        n: round(by[("tuned", n)] / by[("defaults", n)], 2)
        for (config, n) in by
        if config == "tuned" and by.get(("defaults", n))
    }


def ceiling_ratios(levels: list[Level]) -> dict[int, float]:
    defaults = {lv.sessions: lv.turns_per_s for lv in levels if lv.config == "defaults"}
    return {
        lv.sessions: round(lv.cpu_ceiling_turns_per_s / defaults[lv.sessions], 2)
        for lv in levels
        if lv.config == "tuned" and lv.cpu_ceiling_turns_per_s and defaults.get(lv.sessions)
    }


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", help="comma-separated concurrency levels")
    parser.add_argument("--messages", type=int, help="messages per session (default: max(3, 30/N))")
    parser.add_argument("--tuned", help="WorkerTuning as JSON (default: bench.throughput.TUNED)")
    parser.add_argument("--quick", action="store_true", help="3 sessions, 2 messages")
    parser.add_argument(
        "--llm-latency-ms",
        type=int,
        default=0,
        help="answer every LLM request after this long (default 0: the CPU-bound case)",
    )
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args(argv)
    try:
        levels = [int(s) for s in args.sessions.split(",")] if args.sessions else None
        args.tuned = WorkerTuning.model_validate(json.loads(args.tuned)) if args.tuned else TUNED
    except (ValueError, ValidationError) as err:
        parser.error(f"BAD_ARGUMENT: {err}")
    if levels is not None and (not levels or min(levels) < 1):
        parser.error("BAD_SESSIONS: concurrency levels must be positive integers")
    args.sessions = levels or ([3] if args.quick else list(DEFAULT_LEVELS))
    if args.quick:
        args.messages = args.messages or 2
    return args


def main(argv: list[str] | None = None) -> ThroughputReport:
    args = parse_args(argv)
    started = time.perf_counter()
    levels = asyncio.run(run(args))
    by_ratio = ratios(levels)
    report = ThroughputReport(
        turn="one LLM call plus the tool call it asked for; a message = 1 tool turn + 1 text turn",
        llm_latency_ms=args.llm_latency_ms,
        configs={"defaults": WorkerTuning(), "tuned": args.tuned},
        levels=levels,
        ratio_tuned_vs_defaults=by_ratio,
        ratio_tuned_ceiling_vs_defaults=ceiling_ratios(levels),
        target_met=by_ratio[100] >= TARGET_AT_100 if 100 in by_ratio else None,
        machine=machine(),
        wall_s=round(time.perf_counter() - started, 1),
    )
    print(f"tuned / defaults turns/s by sessions: {by_ratio} (target at 100: >= {TARGET_AT_100}x)")
    print(
        "tuned CPU ceiling / defaults turns/s (the most any setting at the tuned CPU cost "
        f"could reach): {report.ratio_tuned_ceiling_vs_defaults}"
    )
    publish(report, args.output)
    return report


if __name__ == "__main__":
    main()
