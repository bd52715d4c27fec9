"""Orchestration overhead per turn: durable-loop vs a bare Temporal loop of the same
activities (the floor) vs an in-process loop (no Temporal).

One run, three loops, the same workload against the same zero-latency scripted endpoint
and a no-op tool: a session answers M messages one after another (Temporal Update), each
message is T tool turns (LLM call -> tool call) and a final text turn. A *turn* is one LLM
call plus the tool calls it asked for. Loops alternate round by round so that drift on a
shared machine hits all three alike. Also reads the real histories to count round trips per
LLM call and the median duration of every hop.

    .venv/bin/python -m bench.overhead [--messages 20] [--tool-turns 3] [--rounds 3] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
import uuid
from pathlib import Path
from typing import Literal

import httpx
from pydantic import BaseModel
from temporalio.client import Client
from temporalio.worker import Worker

from bench.harness import (
    ToolTurns,
    dev_server,
    durable_worker,
    machine,
    median,
    noop_tools,
    publish,
    settings_for,
)
from bench.hops import HopProfile, profile
from bench.naive_activities import NaiveActivities
from bench.naive_loop import (
    NAIVE_LLM,
    NAIVE_SEND,
    NAIVE_WORKFLOW,
    NaiveReply,
    NaiveSessionEnd,
    NaiveSessionInput,
    NaiveSessionWorkflow,
)
from durable_loop.activities.dispatch import dispatch
from durable_loop.client.history import fetch_histories
from durable_loop.core import names
from durable_loop.core.contracts import UserMessage
from durable_loop.core.messages import Message
from durable_loop.core.plan import PromptPlan
from durable_loop.core.providers import get_adapter
from durable_loop.core.providers.openai_compat import loads_lenient
from durable_loop.core.registry import ToolContext
from durable_loop.testing import ScriptedLLM
from durable_loop.worker.builder import new_http_client

Loop = Literal["durable_loop", "bare_temporal", "in_process"]
LOOPS: tuple[Loop, ...] = ("durable_loop", "bare_temporal", "in_process")
TARGET = 1.25
EARLY = 5
DEFAULT_OUTPUT = Path(__file__).parent / "results" / "overhead.json"


class Round(BaseModel):
    loop: Loop
    round: int
    message_s: list[float]
    turns: int
    ms_per_turn: float


class LoopSummary(BaseModel):
    loop: Loop
    ms_per_turn_median: float
    ms_per_turn_rounds: list[float]
    ms_per_turn_first_messages: float
    """The first EARLY messages of each round only: the bare loop's transcript (which it
    carries in history) is still short there."""
    message_ms_median: float
    hops: HopProfile | None = None


class OverheadReport(BaseModel):
    workload: dict[str, int | str]
    loops: list[LoopSummary]
    ratio_durable_vs_bare: float
    ratio_durable_vs_in_process: float
    ratio_bare_vs_in_process: float
    ratio_durable_vs_bare_first_messages: float
    target_ratio_vs_bare: float = TARGET
    target_met: bool
    overhead_ms_per_turn_vs_bare: float
    machine: dict[str, object]
    wall_s: float


class Workload(BaseModel):
    messages: int
    tool_turns: int

    @property
    def turns_per_message(self) -> int:
        return self.tool_turns + 1


def _round(loop: Loop, index: int, times: list[float], work: Workload) -> Round:
    turns = len(times) * work.turns_per_message
    return Round(
        loop=loop,
        round=index,
        message_s=[round(t, 4) for t in times],
        turns=turns,
        ms_per_turn=round(1000 * sum(times) / turns, 2),
    )


async def _timed(send, work: Workload, check) -> list[float]:
    await send("warm up")
    times = []
    for i in range(work.messages):
        started = time.perf_counter()
        result = await send(f"message {i}")
        times.append(time.perf_counter() - started)
        check(result)
    return times


async def durable_round(env, llm: ScriptedLLM, work: Workload, workdir: Path, index: int):
    model = f"ovh-durable-{uuid.uuid4().hex[:8]}"
    llm.script(model, [], then=ToolTurns(work.tool_turns))
    async with durable_worker(env, noop_tools(), workdir) as w:
        sid = f"ovh-{uuid.uuid4().hex[:8]}"
        await w.sessions.start(sid, settings_for(llm, model))

        def check(result) -> None:
            if result.status != "completed" or len(result.tool_calls) != work.tool_turns:
                raise RuntimeError(f"durable-loop turn failed: {result.model_dump_json()}")

        times = await _timed(lambda text: w.sessions.send(sid, text), work, check)
        histories = await fetch_histories(env.client, names.session_workflow_id(sid))
        await w.sessions.handle(sid).terminate("bench done")
    llm.forget(model)
    return _round("durable_loop", index, times, work), profile(histories, names.LLM_TURN)


async def bare_round(client: Client, llm: ScriptedLLM, work: Workload, index: int):
    model = f"ovh-bare-{uuid.uuid4().hex[:8]}"
    llm.script(model, [], then=ToolTurns(work.tool_turns))
    registry = noop_tools()
    http = new_http_client()
    queue = f"bench-bare-{uuid.uuid4().hex[:8]}"
    worker = Worker(
        client,
        task_queue=queue,
        workflows=[NaiveSessionWorkflow],
        activities=NaiveActivities(http, registry).all(),  # type: ignore[arg-type]
    )
    try:
        async with worker:
            handle = await client.start_workflow(
                NAIVE_WORKFLOW,
                NaiveSessionInput(
                    endpoint=settings_for(llm, model).llm, tools=registry.specs(), max_turns=12
                ),
                id=f"bare-{uuid.uuid4().hex[:8]}",
                task_queue=queue,
                result_type=NaiveSessionEnd,
            )

            async def send(text: str) -> NaiveReply:
                return await handle.execute_update(
                    NAIVE_SEND, UserMessage(text=text), result_type=NaiveReply
                )

            def check(result: NaiveReply) -> None:
                if result.tool_calls != work.tool_turns or not result.reply:
                    raise RuntimeError(f"bare loop turn failed: {result.model_dump_json()}")

            times = await _timed(send, work, check)
            histories = await fetch_histories(client, handle.id)
            await handle.terminate("bench done")
    finally:
        await http.aclose()
    llm.forget(model)
    return _round("bare_temporal", index, times, work), profile(histories, NAIVE_LLM)


async def in_process_round(llm: ScriptedLLM, work: Workload, index: int) -> Round:
    """The same LLM call (adapter, HTTP) and tool dispatch, called directly."""
    model = f"ovh-inproc-{uuid.uuid4().hex[:8]}"
    llm.script(model, [], then=ToolTurns(work.tool_turns))
    registry = noop_tools()
    endpoint = settings_for(llm, model).llm
    transcript: list[Message] = []
    adapter = get_adapter(endpoint.provider)
    async with httpx.AsyncClient(transport=httpx.AsyncHTTPTransport(retries=0)) as http:

        async def llm_call() -> Message:
            plan = PromptPlan(
                model=endpoint.model,
                session_id="inproc",
                upto_seq=len(transcript),
                tools=registry.specs(),
                tool_choice="auto",
            )
            request = adapter.build_request(plan, transcript)
            url = f"{endpoint.base_url}{endpoint.api_prefix}{request.endpoint}"
            response = await http.post(url, json=request.body, timeout=endpoint.timeout_s)
            response.raise_for_status()
            return adapter.parse_response(loads_lenient(response.text), response.text).message

        async def send(text: str) -> int:
            transcript.append(Message.user(text))
            calls = 0
            for turn in range(12):
                message = await llm_call()
                transcript.append(message)
                if not message.tool_calls:
                    return calls
                for call in message.tool_calls:
                    ctx = ToolContext(
                        session_id="inproc",
                        workflow_id="inproc",
                        call_id=call.id,
                        turn=turn,
                        attempt=1,
                        idempotency_key=f"inproc:{call.id}:{len(transcript)}",
                    )
                    done = await dispatch(
                        registry.get(call.name),
                        call.name,
                        call.arguments,
                        ctx,
                        timeout_s=60,
                        max_output_bytes=200_000,
                        last_attempt=True,
                    )
                    envelope = done.envelope
                    transcript.append(Message.tool_result(call.id, call.name, envelope))
                    calls += 1
            return calls

        def check(calls: int) -> None:
            if calls != work.tool_turns:
                raise RuntimeError(f"in-process loop made {calls} tool calls")

        times = await _timed(send, work, check)
    llm.forget(model)
    return _round("in_process", index, times, work)


async def run(work: Workload, rounds: int, console_print) -> tuple[list[Round], dict]:
    results: list[Round] = []
    hops: dict[Loop, HopProfile] = {}
    with tempfile.TemporaryDirectory(prefix="overhead-") as tmp, ScriptedLLM() as llm:
        async with dev_server() as env:
            for index in range(rounds):
                order = LOOPS[index % 3 :] + LOOPS[: index % 3]
                for loop in order:
                    if loop == "durable_loop":
                        r, hops[loop] = await durable_round(env, llm, work, Path(tmp), index)
                    elif loop == "bare_temporal":
                        r, hops[loop] = await bare_round(env.client, llm, work, index)
                    else:
                        r = await in_process_round(llm, work, index)
                    console_print(f"round {index} {loop:>14}: {r.ms_per_turn:7.2f} ms/turn")
                    results.append(r)
    return results, hops


def summarize(results: list[Round], hops: dict, work: Workload, wall_s: float) -> OverheadReport:
    loops = []
    per: dict[str, float] = {}
    for loop in LOOPS:
        mine = [r for r in results if r.loop == loop]
        per[loop] = median([r.ms_per_turn for r in mine])
        loops.append(
            LoopSummary(
                loop=loop,
                ms_per_turn_median=round(per[loop], 2),
                ms_per_turn_rounds=[r.ms_per_turn for r in mine],
                ms_per_turn_first_messages=round(
                    1000
                    * median([sum(r.message_s[:EARLY]) / len(r.message_s[:EARLY]) for r in mine])
                    / work.turns_per_message,
                    2,
                ),
                message_ms_median=round(1000 * median([t for r in mine for t in r.message_s]), 2),
                hops=hops.get(loop),
            )
        )
    vs_bare = per["durable_loop"] / per["bare_temporal"]
    return OverheadReport(
        workload={
            "messages_per_round": work.messages,
            "tool_turns_per_message": work.tool_turns,
            "turns_per_message": work.turns_per_message,
            "tool": "async no-op",
            "llm": "ScriptedLLM, zero latency, real HTTP",
            "server": "temporal dev server (embedded, in memory)",
            "worker_tuning": "SDK defaults for both Temporal loops",
        },
        loops=loops,
        ratio_durable_vs_bare=round(vs_bare, 3),
        ratio_durable_vs_in_process=round(per["durable_loop"] / per["in_process"], 3),
        ratio_bare_vs_in_process=round(per["bare_temporal"] / per["in_process"], 3),
        ratio_durable_vs_bare_first_messages=round(
            loops[0].ms_per_turn_first_messages / loops[1].ms_per_turn_first_messages, 3
        ),
        target_met=vs_bare <= TARGET,
        overhead_ms_per_turn_vs_bare=round(per["durable_loop"] - per["bare_temporal"], 2),
        machine=machine(),
        wall_s=round(wall_s, 1),
    )


def parse_workload_args(
    argv: list[str] | None, description: str, output: Path, quick_tool_turns: int
) -> argparse.Namespace:
    """--messages/--tool-turns/--rounds/--quick/--output, shared with bench.dev_server_latency."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--messages", type=int, default=20, help="timed messages per round")
    parser.add_argument("--tool-turns", type=int, default=3, help="tool turns per message")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--quick", action="store_true", help=f"3 messages, {quick_tool_turns} tool turns, 1 round"
    )
    parser.add_argument("--output", type=Path, default=output)
    args = parser.parse_args(argv)
    if args.quick:
        args.messages, args.tool_turns, args.rounds = 3, quick_tool_turns, 1
    if min(args.messages, args.rounds) < 1 or not 0 <= args.tool_turns <= 10:
        parser.error("BAD_WORKLOAD: messages and rounds >= 1, tool turns 0..10")
    return args


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    return parse_workload_args(argv, __doc__.split("\n\n")[0], DEFAULT_OUTPUT, 2)


def main(argv: list[str] | None = None) -> OverheadReport:
    args = parse_args(argv)
    work = Workload(messages=args.messages, tool_turns=args.tool_turns)
    started = time.perf_counter()
    results, hops = asyncio.run(run(work, args.rounds, lambda line: print(line, flush=True)))
    report = summarize(results, hops, work, time.perf_counter() - started)
    for loop in report.loops:
        print(f"{loop.loop:>14}: {loop.ms_per_turn_median:7.2f} ms/turn (median of rounds)")
        if loop.hops:
            print(f"{'':>16}per LLM call: {loop.hops.per_llm_call}")
            print(f"{'':>16}median ms:    {loop.hops.median_ms}")
    print(
        f"durable/bare {report.ratio_durable_vs_bare}x (target <= {TARGET}), "
        f"durable/in-process {report.ratio_durable_vs_in_process}x, "
        f"bare/in-process {report.ratio_bare_vs_in_process}x; first {EARLY} messages only: "
        f"durable/bare {report.ratio_durable_vs_bare_first_messages}x"
    )
    publish(report, args.output)
    return report


if __name__ == "__main__":
    main()
