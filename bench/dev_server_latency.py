"""Turn latency on the embedded dev server with its stock settings vs with
``durable_loop.cli.devserver.DYNAMIC_CONFIG`` (history task queues read up to 1000
times a second instead of 20), side by side in one run.

Both servers run at once; rounds alternate between them. Each round is one durable-loop
session answering M messages of T tool turns against a zero-latency scripted endpoint and a
no-op tool (the workload of ``bench.overhead``). The histories give where the time went:
the workflow-task and activity queue waits are the hops the read limit delays.

    .venv/bin/python -m bench.dev_server_latency [--messages 20] [--tool-turns 3] [--rounds 3]
        [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from bench.harness import dev_server, machine, median, publish
from bench.hops import HopProfile
from bench.overhead import Round, Workload, durable_round, parse_workload_args
from durable_loop.cli.devserver import DYNAMIC_CONFIG
from durable_loop.testing import ScriptedLLM

Server = Literal["stock", "durable_loop"]
SERVERS: dict[Server, dict[str, int]] = {"stock": {}, "durable_loop": DYNAMIC_CONFIG}
DEFAULT_OUTPUT = Path(__file__).parent / "results" / "dev_server_latency.json"


class ServerSummary(BaseModel):
    server: Server
    dynamic_config: dict[str, int]
    ms_per_turn_median: float
    ms_per_turn_rounds: list[float]
    message_ms_median: float
    hops: HopProfile


class LatencyReport(BaseModel):
    workload: dict[str, int | str]
    servers: list[ServerSummary]
    ratio_stock_vs_tuned: float
    """ms per turn on the stock server / on the server durable-loop starts."""
    machine: dict[str, object]
    wall_s: float


async def run(
    work: Workload, rounds: int, say
) -> tuple[dict[Server, list[Round]], dict[Server, HopProfile]]:
    results: dict[Server, list[Round]] = {name: [] for name in SERVERS}
    hops: dict[Server, HopProfile] = {}
    with tempfile.TemporaryDirectory(prefix="devlat-") as tmp, ScriptedLLM() as llm:
        async with AsyncExitStack() as stack:
            envs = {
                name: await stack.enter_async_context(dev_server(dynamic_config=config))
                for name, config in SERVERS.items()
            }
            order: list[Server] = list(SERVERS)
            for index in range(rounds):
                for name in order if index % 2 == 0 else reversed(order):
                    r, hops[name] = await durable_round(envs[name], llm, work, Path(tmp), index)
                    say(f"round {index} {name:>12}: {r.ms_per_turn:7.2f} ms/turn")
                    results[name].append(r)
    return results, hops


def summarize(
    results: dict[Server, list[Round]],
    hops: dict[Server, HopProfile],
    work: Workload,
    wall_s: float,
) -> LatencyReport:
    summaries = []
    for name, config in SERVERS.items():
        mine = results[name]
        summaries.append(
            ServerSummary(
                server=name,
                dynamic_config=config,
                ms_per_turn_median=round(median([r.ms_per_turn for r in mine]), 2),
                ms_per_turn_rounds=[r.ms_per_turn for r in mine],
                message_ms_median=round(1000 * median([t for r in mine for t in r.message_s]), 2),
                hops=hops[name],
            )
        )
    stock, tuned = summaries
    return LatencyReport(
        workload={
            "messages_per_round": work.messages,
            "tool_turns_per_message": work.tool_turns,
            "turns_per_message": work.turns_per_message,
            "llm": "ScriptedLLM, zero latency, real HTTP",
            "server": "temporal dev server (embedded, in memory), one session at a time",
        },
        servers=summaries,
        ratio_stock_vs_tuned=round(stock.ms_per_turn_median / tuned.ms_per_turn_median, 2),
        machine=machine(),
        wall_s=round(wall_s, 1),
    )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    return parse_workload_args(argv, __doc__.split("\n\n")[0], DEFAULT_OUTPUT, 1)


def main(argv: list[str] | None = None) -> LatencyReport:
    args = parse_args(argv)
    work = Workload(messages=args.messages, tool_turns=args.tool_turns)
    started = time.perf_counter()
    results, hops = asyncio.run(run(work, args.rounds, lambda line: print(line, flush=True)))
    report = summarize(results, hops, work, time.perf_counter() - started)
    for server in report.servers:
        print(f"{server.server:>12}: {server.ms_per_turn_median:7.2f} ms/turn (median of rounds)")
        print(f"{'':>14}median ms: {server.hops.median_ms}")
    print(f"stock / durable-loop server: {report.ratio_stock_vs_tuned}x ms per turn")
    publish(report, args.output)
    return report


if __name__ == "__main__":
    main()
