"""Bursts of session starts: N sessions started at once, each taking one message (a tool
turn and a text turn at zero LLM latency), against the same N bare Temporal workflows
running the same two activities (bench/naive_loop.py), one after the other in one run on
the embedded dev server, with the SDK's default worker settings for both.

Each caller starts its session and sends its message in one update-with-start call and
waits for the reply. Printed: start-to-reply rate (sessions replied per second of the
burst), p50/p99 time from the burst's start to each first reply, and the errors callers
saw (for durable-loop, a message that was admitted is never reported as failed).

    .venv/bin/python -m bench.session_starts [--sessions 2000] [--large] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

from pydantic import BaseModel
from temporalio.client import Client, WithStartWorkflowOperation
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from bench.harness import (
    ToolTurns,
    dev_server,
    durable_worker,
    machine,
    noop_tools,
    publish,
    settings_for,
)
from bench.naive_activities import NaiveActivities
from bench.naive_loop import (
    NAIVE_SEND,
    NAIVE_WORKFLOW,
    NaiveReply,
    NaiveSessionEnd,
    NaiveSessionInput,
    NaiveSessionWorkflow,
)
from bench.throughput import load_clients
from durable_loop.client.sessions import SessionClient
from durable_loop.core.contracts import UserMessage
from durable_loop.testing import ScriptedLLM
from durable_loop.worker.deps import new_http_client

DEFAULT_SESSIONS = 2000
LARGE_SESSIONS = 10_000
TARGET_RATIO = 0.8
DEFAULT_OUTPUT = Path(__file__).parent / "results" / "session_starts.json"


class Burst(BaseModel):
    loop: str
    sessions: int
    replied: int
    errors: int
    error_samples: list[str] = []
    wall_s: float
    starts_per_s: float
    first_reply_p50_s: float
    first_reply_p99_s: float


class SessionStartsReport(BaseModel):
    message: str
    bursts: list[Burst]
    ratio_durable_vs_bare: float
    target: float = TARGET_RATIO
    target_met: bool
    machine: dict[str, object]
    wall_s: float


def percentile(values: list[float], q: int) -> float:
    if len(values) < 2:
        return round(values[0], 3) if values else 0.0
    return round(statistics.quantiles(values, n=100, method="inclusive")[q - 1], 3)


async def burst(
    loop: str, count: int, send: Callable[[int], Awaitable[bool]], started: float
) -> Burst:
    """Fire ``count`` callers at once; each returns whether its reply was right."""
    replies: list[float] = []
    errors: list[str] = []

    async def one(index: int) -> None:
        try:
            ok = await send(index)
        except Exception as err:  # every caller-visible failure is counted, not raised
            errors.append(f"{type(err).__name__}: {err}")
            return
        if ok:
            replies.append(time.perf_counter() - started)
        else:
            errors.append("wrong reply")

    await asyncio.gather(*(one(i) for i in range(count)))
    wall = time.perf_counter() - started
    return Burst(
        loop=loop,
        sessions=count,
        replied=len(replies),
        errors=len(errors),
        error_samples=errors[:5],
        wall_s=round(wall, 3),
        starts_per_s=round(len(replies) / wall, 1),
        first_reply_p50_s=percentile(replies, 50),
        first_reply_p99_s=percentile(replies, 99),
    )


async def durable_burst(
    env: WorkflowEnvironment, clients: list[Client], llm: ScriptedLLM, count: int, tmp: Path
) -> Burst:
    model = f"starts-durable-{uuid.uuid4().hex[:6]}"
    llm.script(model, [], then=ToolTurns(1))
    settings = settings_for(llm, model)
    async with durable_worker(env, noop_tools(), tmp) as worker:
        sessions = [
            SessionClient(c, task_queue=worker.task_queue, search_attributes=False) for c in clients
        ]

        async def send(index: int) -> bool:
            client = sessions[index % len(sessions)]
            sid = f"starts-{model}-{index}"
            result = await client.start_and_send(sid, settings, "go", message_id=f"{sid}-m1")
            return result.status == "completed" and len(result.tool_calls) == 1

        outcome = await burst("durable_loop", count, send, time.perf_counter())
    llm.forget(model)
    return outcome


async def bare_burst(clients: list[Client], llm: ScriptedLLM, count: int) -> Burst:
    model = f"starts-bare-{uuid.uuid4().hex[:6]}"
    llm.script(model, [], then=ToolTurns(1))
    endpoint = settings_for(llm, model).llm
    registry = noop_tools()
    queue = f"starts-bare-{uuid.uuid4().hex[:6]}"
    http = new_http_client()
    inp = NaiveSessionInput(endpoint=endpoint, tools=registry.specs())
    worker = Worker(
        clients[0],
        task_queue=queue,
        workflows=[NaiveSessionWorkflow],
        activities=NaiveActivities(http, registry).all(),  # type: ignore[arg-type]
    )

    async def send(index: int) -> bool:
        client = clients[index % len(clients)]
        start: WithStartWorkflowOperation[NaiveSessionInput, NaiveSessionEnd] = (
            WithStartWorkflowOperation(
                NAIVE_WORKFLOW,
                inp,
                id=f"{queue}-{index}",
                task_queue=queue,
                id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
                result_type=NaiveSessionEnd,
            )
        )
        reply = await client.execute_update_with_start_workflow(
            NAIVE_SEND,
            UserMessage(text="go"),
            start_workflow_operation=start,
            result_type=NaiveReply,
        )
        return reply.tool_calls == 1 and bool(reply.reply)

    try:
        async with worker:
            outcome = await burst("bare_temporal", count, send, time.perf_counter())
    finally:
        await http.aclose()
    llm.forget(model)
    return outcome


async def run(count: int) -> list[Burst]:
    with tempfile.TemporaryDirectory(prefix="session-starts-") as tmp, ScriptedLLM() as llm:
        async with dev_server() as env:
            clients = await load_clients(env, count)
            bare = await bare_burst(clients, llm, count)
            print(_line(bare), flush=True)
            durable = await durable_burst(env, clients, llm, count, Path(tmp))
            print(_line(durable), flush=True)
    return [durable, bare]


def _line(b: Burst) -> str:
    return (
        f"{b.loop:>14}: {b.replied}/{b.sessions} replied in {b.wall_s:.1f}s "
        f"({b.starts_per_s} starts/s), first reply p50 {b.first_reply_p50_s}s "
        f"p99 {b.first_reply_p99_s}s, {b.errors} errors"
    )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=DEFAULT_SESSIONS)
    parser.add_argument("--large", action="store_true", help=f"{LARGE_SESSIONS:,} sessions")
    parser.add_argument("--quick", action="store_true", help="10 sessions")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args(argv)
    if args.sessions < 1:
        parser.error("BAD_ARGUMENT: --sessions must be positive")
    if args.large:
        args.sessions = LARGE_SESSIONS
    if args.quick:
        args.sessions = 10
    return args


def main(argv: list[str] | None = None) -> SessionStartsReport:
    args = parse_args(argv)
    started = time.perf_counter()
    durable, bare = asyncio.run(run(args.sessions))
    ratio = round(durable.starts_per_s / bare.starts_per_s, 2) if bare.starts_per_s else 0.0
    report = SessionStartsReport(
        message="update-with-start of a new session, one tool turn and one text turn, "
        "zero-latency LLM, SDK default worker settings",
        bursts=[durable, bare],
        ratio_durable_vs_bare=ratio,
        target_met=ratio >= TARGET_RATIO and durable.errors == 0,
        machine=machine(),
        wall_s=round(time.perf_counter() - started, 1),
    )
    print(f"durable-loop / bare starts-to-reply rate: {ratio}x (target >= {TARGET_RATIO}x)")
    publish(report, args.output)
    return report


if __name__ == "__main__":
    main()
