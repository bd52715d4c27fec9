"""History bytes per turn at 10 / 100 / 1,000 / 5,000 turns, each tool output ~2 KB: the
per-turn cost must stay constant, and the 5,000-turn session completes through
continue-as-new.

Uses the turn of ``bench/history_growth.py`` (one user message answered by one tool turn:
the model calls ``read_page``, the tool returns ~2 KB, the model answers) and its history
measurement, durable-loop only. Unlike that benchmark, the endpoint has a context window
(like every real model: 5,000 turns are ~11 MB of conversation), so each request carries
the newest messages only; the LLM activity then reads only the transcript's tail from the
store, and the wall time per turn stays flat as well (checked: first vs last 10% of turns).

    .venv/bin/python -m bench.history_per_turn [--sizes 10,100,1000,5000] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import threading
import time
import uuid
from pathlib import Path

from pydantic import BaseModel

from bench.common import PAGE_BYTES, TOOL_NAME, HistoryStats, measure, page_tools
from bench.harness import dev_server, durable_worker, machine, median, publish
from durable_loop.client.history import fetch_histories
from durable_loop.core import names
from durable_loop.core.config import RuntimeConfig, SessionSettings
from durable_loop.core.endpoint import ContextWindow, LlmEndpoint
from durable_loop.core.retry import RetrySettings
from durable_loop.core.runtime_groups import HistoryConfig
from durable_loop.testing import RecordedRequest, Reply, ScriptedLLM, reply

DEFAULT_SIZES = (10, 100, 1000, 5000)
WINDOW_CHARS = 24_000
TARGET_RATIO = 1.2
DEFAULT_OUTPUT = Path(__file__).parent / "results" / "history_per_turn.json"


class PageReader:
    """After a user message, call the tool; after its result, answer. Thread-safe counter,
    so call ids stay unique although the model sees only a window of the conversation."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.calls = 0
        self.max_messages = 0

    def __call__(self, request: RecordedRequest) -> Reply:
        messages = request.messages
        with self._lock:
            self.max_messages = max(self.max_messages, len(messages))
            if messages and messages[-1].get("role") == "tool":
                return reply.text("Page read.")
            self.calls += 1
            n = self.calls
        return reply.tool_call(TOOL_NAME, {"page": n}, call_id=f"call_{n}")


class SizeRun(BaseModel):
    size: int
    turns_done: int
    history_bytes: int
    bytes_per_turn: float
    turn_bytes_first: int
    turn_bytes_median: int
    turn_bytes_last: int
    runs: int
    events_per_run: list[int]
    stored_messages: int
    max_request_messages: int
    wall_s: float
    s_per_turn_first_10pct: float
    s_per_turn_last_10pct: float


class HistoryPerTurnReport(BaseModel):
    sizes: list[int]
    results: list[SizeRun]
    per_turn_ratio_largest_vs_smallest: float
    target_ratio_max: float = TARGET_RATIO
    target_met: bool
    settings: dict[str, object]
    machine: dict[str, object]
    wall_s: float


def settings(llm: ScriptedLLM, model: str, continue_after: int) -> SessionSettings:
    return SessionSettings(
        llm=LlmEndpoint(
            model=model,
            base_url=llm.base_url,
            timeout_s=60,
            retry=RetrySettings(initial_interval_s=0.1, maximum_attempts=3),
            context_window=ContextWindow(max_chars=WINDOW_CHARS),
        ),
        runtime=RuntimeConfig(history=HistoryConfig(continue_as_new_after_events=continue_after)),
    )


async def run_size(env, llm: ScriptedLLM, workdir: Path, size: int, continue_after: int) -> SizeRun:
    model = f"hpt-{size}-{uuid.uuid4().hex[:6]}"
    script = PageReader()
    llm.script(model, [], then=script)
    async with durable_worker(env, page_tools(), workdir) as w:
        sid = f"hpt-{size}-{uuid.uuid4().hex[:6]}"
        await w.sessions.start(sid, settings(llm, model, continue_after))
        times = []
        started = time.perf_counter()
        for turn in range(1, size + 1):
            t0 = time.perf_counter()
            result = await w.sessions.send(sid, f"Read the next page ({turn}).")
            times.append(time.perf_counter() - t0)
            if result.status != "completed" or len(result.tool_calls) != 1:
                raise RuntimeError(f"turn {turn} failed: {result.model_dump_json()}")
            if turn % 100 == 0:
                llm.forget(model)
                if turn % 1000 == 0:
                    print(
                        f"  {size}: {turn} turns, {time.perf_counter() - started:.0f}s", flush=True
                    )
        wall = time.perf_counter() - started
        await w.sessions.close(sid, "bench done")
        await w.sessions.handle(sid).result()
        stored = await w.store.count(sid, 10**9)
    llm.forget(model)
    stats: HistoryStats = measure(await fetch_histories(env.client, names.session_workflow_id(sid)))
    tenth = max(1, size // 10)
    per_turn = stats.turn_bytes[:size]
    return SizeRun(
        size=size,
        turns_done=size,
        history_bytes=stats.bytes,
        bytes_per_turn=round(stats.bytes / size, 1),
        turn_bytes_first=per_turn[0],
        turn_bytes_median=int(median([float(b) for b in per_turn])),
        turn_bytes_last=per_turn[-1],
        runs=stats.runs,
        events_per_run=stats.events_per_run,
        stored_messages=stored,
        max_request_messages=script.max_messages,
        wall_s=round(wall, 1),
        s_per_turn_first_10pct=round(sum(times[:tenth]) / tenth, 4),
        s_per_turn_last_10pct=round(sum(times[-tenth:]) / tenth, 4),
    )


async def run(sizes: list[int], continue_after: int) -> list[SizeRun]:
    results = []
    with tempfile.TemporaryDirectory(prefix="history-per-turn-") as tmp, ScriptedLLM() as llm:
        async with dev_server() as env:
            for size in sizes:
                r = await run_size(env, llm, Path(tmp), size, continue_after)
                print(
                    f"{size:>5} turns: {r.bytes_per_turn:8.1f} bytes/turn "
                    f"(turn 1 {r.turn_bytes_first}, last {r.turn_bytes_last}), {r.runs} runs, "
                    f"{r.wall_s}s, s/turn first 10% {r.s_per_turn_first_10pct} "
                    f"last 10% {r.s_per_turn_last_10pct}",
                    flush=True,
                )
                results.append(r)
    return results


def main(argv: list[str] | None = None) -> HistoryPerTurnReport:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", help="comma-separated session lengths in turns")
    parser.add_argument("--continue-as-new-after-events", type=int)
    parser.add_argument("--quick", action="store_true", help="3 and 15 turns, 200-event runs")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args(argv)
    try:
        sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else None
    except ValueError:
        parser.error(f"BAD_SIZES: --sizes must be comma-separated integers, got {args.sizes!r}")
    sizes = sorted(set(sizes or ([3, 15] if args.quick else DEFAULT_SIZES)))
    if min(sizes) < 1:
        parser.error("BAD_SIZES: every size must be a positive number of turns")
    continue_after = args.continue_as_new_after_events or (
        200 if args.quick else RuntimeConfig().history.continue_as_new_after_events
    )
    started = time.perf_counter()
    results = asyncio.run(run(sizes, continue_after))
    ratio = round(results[-1].bytes_per_turn / results[0].bytes_per_turn, 3)
    report = HistoryPerTurnReport(
        sizes=sizes,
        results=results,
        per_turn_ratio_largest_vs_smallest=ratio,
        target_met=ratio <= TARGET_RATIO,
        settings={
            "tool_output_bytes": PAGE_BYTES,
            "context_window_chars": WINDOW_CHARS,
            "continue_as_new_after_events": continue_after,
            "bytes": "sum of serialized event sizes over every run (continue-as-new chain)",
        },
        machine=machine(),
        wall_s=round(time.perf_counter() - started, 1),
    )
    print(f"bytes/turn {sizes[-1]} vs {sizes[0]} turns: {ratio}x (target <= {TARGET_RATIO})")
    publish(report, args.output)
    return report


if __name__ == "__main__":
    main()
