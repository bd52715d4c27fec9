"""Prove that durable-loop's workflow history grows linearly with the session.

Sessions of 10, 100 and 1,000 turns run on the embedded Temporal dev server against a
scripted OpenAI-compatible endpoint over real HTTP, each tool returning ~2 KB; beside each,
in the same run, a naive loop that passes the transcript inline. Prints history bytes per
turn for both, then, as its last line, one JSON object with ``per_turn_ratio_1000_vs_10``.

    .venv/bin/python -m bench.history_growth [--sizes 10,100,1000] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from bench.common import PAGE_BYTES, TURN_DEFINITION, ConversationScript
from bench.runners import TUNING, BenchConfig, LoopName, LoopRun, run_durable, run_naive
from durable_loop.testing import ScriptedLLM
from durable_loop.toolcalling.config import RuntimeConfig
from durable_loop.workers.binaries import temporal_cli

TARGET_RATIO = 1.2
DEFAULT_SIZES = (10, 100, 1000)
QUICK_SIZES = (3, 12)
QUICK_CONTINUE_AS_NEW_AFTER = 200
DEFAULT_OUTPUT = Path(__file__).parent / "results" / "history_growth.json"
LOOPS: tuple[LoopName, ...] = ("durable_loop", "naive")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", help="comma-separated session lengths in turns")
    parser.add_argument("--quick", action="store_true", help="tiny sizes for a smoke test")
    parser.add_argument(
        "--continue-as-new-after-events",
        type=int,
        help="RuntimeConfig.continue_as_new_after_events for durable-loop sessions",
    )
    parser.add_argument("--turn-timeout", type=float, default=60.0, help="seconds per turn")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args(argv)
    try:
        sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else None
    except ValueError:
        parser.error(f"BAD_SIZES: --sizes must be comma-separated integers, got {args.sizes!r}")
    if sizes is not None and (not sizes or min(sizes) < 1):
        parser.error("BAD_SIZES: every size must be a positive number of turns")
    args.sizes = sorted(set(sizes or (QUICK_SIZES if args.quick else DEFAULT_SIZES)))
    if args.continue_as_new_after_events is None:
        args.continue_as_new_after_events = (
            QUICK_CONTINUE_AS_NEW_AFTER
            if args.quick
            else RuntimeConfig().continue_as_new_after_events
        )
    if args.continue_as_new_after_events < QUICK_CONTINUE_AS_NEW_AFTER:
        parser.error("BAD_CONTINUE_AS_NEW: RuntimeConfig requires at least 200 events")
    return args


async def run_all(args: argparse.Namespace, console: Console) -> list[LoopRun]:
    runs: list[LoopRun] = []
    with tempfile.TemporaryDirectory(prefix="history-growth-") as workdir:
        cfg = BenchConfig(
            workdir=Path(workdir),
            continue_as_new_after_events=args.continue_as_new_after_events,
            turn_timeout_s=args.turn_timeout,
        )
        script = ConversationScript()
        llm = ScriptedLLM().start()
        env = await WorkflowEnvironment.start_local(
            data_converter=pydantic_data_converter,
            dev_server_existing_path=temporal_cli(),
            dev_server_log_level="error",
        )
        try:
            for size in args.sizes:
                for runner in (run_durable, run_naive):
                    run = await runner(env.client, llm, script, size, cfg)
                    console.print(progress_line(run))
                    runs.append(run)
        finally:
            await env.shutdown()
            llm.stop()
    return runs


def progress_line(run: LoopRun) -> str:
    line = (
        f"{run.loop:>12} {run.size:>5} turns: {run.turns_done} done, "
        f"{run.history.bytes:,} history bytes, {run.wall_s:.1f}s"
    )
    if run.failed_at_turn is not None:
        line += f" [red]FAILED at turn {run.failed_at_turn}[/red]"
    return line


def turn_profile(run: LoopRun) -> dict[str, int | None]:
    """Marginal bytes of single turns: does turn N cost what turn 1 cost?"""
    per_turn = run.history.turn_bytes[: run.turns_done] or [0]
    return {
        "first": per_turn[0],
        "median": int(statistics.median(per_turn)),
        "last": per_turn[-1],
        "max": max(per_turn),
    }


def ratio(runs: list[LoopRun], loop: LoopName, small: int, large: int) -> float | None:
    by_size = {r.size: r for r in runs if r.loop == loop}
    a, b = by_size.get(small), by_size.get(large)
    if a is None or b is None or a.failed_at_turn or b.failed_at_turn:
        return None
    if a.bytes_per_turn is None or b.bytes_per_turn is None:
        return None
    return round(b.bytes_per_turn / a.bytes_per_turn, 3)


def run_summary(run: LoopRun) -> dict[str, object]:
    return {
        "loop": run.loop,
        "size": run.size,
        "turns_done": run.turns_done,
        "history_bytes": run.history.bytes,
        "bytes_per_turn": round(run.bytes_per_turn, 1) if run.bytes_per_turn else None,
        "turn_bytes": turn_profile(run),
        "run_overhead_bytes": run.history.run_overhead_bytes,
        "events": run.history.events,
        "runs": run.history.runs,
        "continue_as_new": run.history.runs - 1,
        "wall_s": round(run.wall_s, 2),
        "s_per_turn": round(run.wall_s / run.turns_done, 4) if run.turns_done else None,
        "llm_requests": run.llm_requests,
        "last_request_messages": run.last_request_messages,
        "continuity_ok": run.continuity_ok,
        "failed_at_turn": run.failed_at_turn,
        "reason": run.reason,
    }


def report(args: argparse.Namespace, runs: list[LoopRun], wall_s: float) -> dict[str, object]:
    small, large = min(args.sizes), max(args.sizes)
    naive_failures = [r for r in runs if r.loop == "naive" and r.failed_at_turn is not None]
    first_fail = naive_failures[0] if naive_failures else None
    smallest_naive = next((r for r in runs if r.loop == "naive" and r.size == small), None)
    at_failure = None
    if first_fail and smallest_naive and first_fail.bytes_per_turn and first_fail != smallest_naive:
        at_failure = {
            "measured_over_turns": first_fail.turns_done,
            "ratio_vs_smallest": round(
                first_fail.bytes_per_turn / (smallest_naive.bytes_per_turn or 1), 3
            ),
        }
    durable_ratio = ratio(runs, "durable_loop", small, large)
    return {
        "per_turn_ratio_1000_vs_10": {loop: ratio(runs, loop, 10, 1000) for loop in LOOPS},
        "per_turn_ratio_largest_vs_smallest": {
            "sizes": [small, large],
            **{loop: ratio(runs, loop, small, large) for loop in LOOPS},
        },
        "target_durable_loop_ratio_max": TARGET_RATIO,
        "target_met": durable_ratio is not None and durable_ratio <= TARGET_RATIO,
        "naive": {
            "failed_at_turn": first_fail.failed_at_turn if first_fail else None,
            "failed_size": first_fail.size if first_fail else None,
            "reason": first_fail.reason if first_fail else None,
            "per_turn_ratio_up_to_failure": at_failure,
            "note": "ratio is null where a naive session did not finish; per-turn ratio "
            "up to failure is measured over the turns it did finish",
        },
        "turn_definition": TURN_DEFINITION,
        "bytes_measured": "sum of len(event.SerializeToString()) over every event of every "
        "run (continue-as-new chain) of the session workflow, fetched from the server",
        "results": [run_summary(r) for r in runs],
        "settings": {
            "sizes": args.sizes,
            "tool_output_bytes": PAGE_BYTES,
            "continue_as_new_after_events": args.continue_as_new_after_events,
            "inline_bytes": RuntimeConfig().inline_bytes,
            "worker_tuning": TUNING.model_dump(exclude_none=True),
            "server": "temporal dev server (embedded, in-memory)",
            "cpus": os.cpu_count(),
        },
        "wall_s_total": round(wall_s, 1),
    }


def table(runs: list[LoopRun]) -> Table:
    out = Table(title="Workflow history per session (real histories, every run)")
    for name in ("loop", "size", "turns", "history bytes", "bytes/turn", "turn 1 → last"):
        out.add_column(name, justify="right")
    for name in ("events", "runs", "wall s", "status"):
        out.add_column(name, justify="right")
    for run in runs:
        profile = turn_profile(run)
        status = "ok" if run.continuity_ok else "[yellow]continuity?[/yellow]"
        if run.failed_at_turn is not None:
            status = f"[red]failed at {run.failed_at_turn}[/red]"
        out.add_row(
            run.loop,
            str(run.size),
            str(run.turns_done),
            f"{run.history.bytes:,}",
            f"{run.bytes_per_turn:,.0f}" if run.bytes_per_turn else "-",
            f"{profile['first']:,} → {profile['last']:,}",
            f"{run.history.events:,}",
            str(run.history.runs),
            f"{run.wall_s:.1f}",
            status,
        )
    return out


def main(argv: list[str] | None = None) -> dict[str, object]:
    args = parse_args(argv)
    console = Console(file=sys.stdout, width=140)
    console.print(f"[bold]turn[/bold]: {TURN_DEFINITION}")
    started = time.perf_counter()
    runs = asyncio.run(run_all(args, console))
    result = report(args, runs, time.perf_counter() - started)
    console.print(table(runs))
    for run in runs:
        if run.failed_at_turn is not None:
            console.print(f"[red]{run.loop} {run.size}[/red]: failed at turn "
                          f"{run.failed_at_turn}: {run.reason}")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    console.print(f"written to {args.output}")
    sys.stdout.flush()
    print(json.dumps(result, separators=(",", ":")), flush=True)
    return result


if __name__ == "__main__":
    main()
