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
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console

from bench.common import TURN_DEFINITION, ConversationScript
from bench.harness import publish
from bench.report import HistoryGrowthReport, breakdown_table, build_report, results_table
from bench.runners import BenchConfig, LoopRun, run_durable, run_naive
from durable_loop.cli.devserver import start_local_environment
from durable_loop.core.config import RuntimeConfig
from durable_loop.testing import ScriptedLLM

DEFAULT_SIZES = (10, 100, 1000)
QUICK_SIZES = (3, 12)
QUICK_CONTINUE_AS_NEW_AFTER = 200
DEFAULT_OUTPUT = Path(__file__).parent / "results" / "history_growth.json"


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
            else RuntimeConfig().history.continue_as_new_after_events
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
        env = await start_local_environment()
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


def main(argv: list[str] | None = None) -> HistoryGrowthReport:
    args = parse_args(argv)
    console = Console(file=sys.stdout, width=140)
    console.print(f"[bold]turn[/bold]: {TURN_DEFINITION}")
    started = time.perf_counter()
    runs = asyncio.run(run_all(args, console))
    report = build_report(
        runs,
        sizes=args.sizes,
        continue_as_new_after_events=args.continue_as_new_after_events,
        inline_bytes=RuntimeConfig().history.inline_bytes,
        wall_s=time.perf_counter() - started,
    )
    console.print(results_table(runs))
    console.print(breakdown_table(runs))
    for run in runs:
        if run.failed_at_turn is not None:
            console.print(
                f"[red]{run.loop} {run.size}[/red]: failed at turn "
                f"{run.failed_at_turn}: {run.reason}"
            )
    publish(report, args.output, console.print)
    return report


if __name__ == "__main__":
    main()
