"""Parked sessions: N sessions each waiting on a person's approval (a pending facts
proposal), and the worker's resident memory with them parked, for a small and a large
workflow cache side by side in one run.

Each session is created by update-with-start; its first message makes the scripted model
call ``facts_propose`` and answer, so the session ends the message with a proposal pending
and waits (no timer fires for days). The worker is a real ``durable-loop worker`` process
(``--tools durable_loop.worker.workspace_tools:registry``); its RSS is read from /proc
before and after parking. Parked sessions should cost the worker nothing beyond its
workflow cache: with a small cache, RSS stays flat however many sessions wait. Then a few
parked sessions are confirmed, which wakes (and, when evicted, replays) them.

    .venv/bin/python -m bench.parked_sessions [--sessions 10000] [--caches 100,10000] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

from pydantic import BaseModel

from bench.harness import (
    bounded,
    cpu_s,
    dev_server,
    machine,
    publish,
    rss_mb,
    server_address,
    settings_for,
)
from durable_loop.chaos.processes import WorkerProcess
from durable_loop.client.sessions import SessionClient
from durable_loop.store import StoreConfig
from durable_loop.testing import RecordedRequest, Reply, ScriptedLLM, reply

TOOLS = "durable_loop.worker.workspace_tools:registry"
IN_FLIGHT = 64
BATCHES = 4
WAKE = 5
SETTLE_S = 3.0
DEFAULT_OUTPUT = Path(__file__).parent / "results" / "parked_sessions.json"


def proposer(request: RecordedRequest) -> Reply:
    """Propose a budget, then say so once the tool answered."""
    if request.messages and request.messages[-1].get("role") == "tool":
        return reply.text("I proposed a budget; it waits for your confirmation.")
    change = {"op": "add", "path": "/budget", "value": 100}
    return reply.tool_call("facts_propose", {"changes": [change], "summary": "set a budget"})


class CacheRun(BaseModel):
    max_cached_workflows: int
    sessions: int
    parked: int
    failed: int
    park_wall_s: float
    sessions_per_s: float
    worker_rss_mb_before: float
    worker_rss_mb_parked: float
    worker_rss_mb_growth: float
    worker_kb_per_parked_session: float
    rss_curve: list[tuple[int, float]]
    """(sessions parked so far, worker RSS MB) after each batch."""
    marginal_kb_per_session: float | None
    """RSS slope between the first and the last batch: the cost of one more parked session
    once the worker is warm."""
    worker_cpu_s: float
    wake_s: list[float]
    woken_committed: int


class ParkedReport(BaseModel):
    sessions: int
    runs: list[CacheRun]
    rss_growth_ratio_large_vs_small_cache: float | None
    note: str
    machine: dict[str, object]
    wall_s: float


async def park(
    sessions: SessionClient,
    llm: ScriptedLLM,
    model: str,
    count: int,
    in_flight: int,
    pid: int,
) -> tuple[list[str], int, list[tuple[int, float]]]:
    """Park ``count`` sessions in BATCHES, ``in_flight`` at a time; returns their ids, how
    many parked, and the worker's RSS after each batch (parked so far, MB)."""
    settings = settings_for(llm, model)
    ids = [f"park-{i}-{uuid.uuid4().hex[:8]}" for i in range(count)]

    errors: list[str] = []

    def start(sid: str) -> Callable[[], Awaitable[bool]]:
        async def one() -> bool:
            try:
                result = await sessions.start_and_send(sid, settings, "set a budget of 100")
            except Exception as err:  # counted and reported, the other sessions go on
                errors.append(f"{type(err).__name__}: {err}")
                return False
            return result.status == "completed"

        return one

    parked, curve = 0, []
    size = -(-count // BATCHES)
    for first in range(0, count, size):
        batch = [start(sid) for sid in ids[first : first + size]]
        results = await bounded(batch, in_flight)
        parked += sum(results)
        llm.forget(model)
        curve.append((parked, rss_mb(pid)))
    if errors:
        print(f"{len(errors)} sessions failed to park, e.g. {errors[0]}", flush=True)
    return ids, parked, curve


async def wake(sessions: SessionClient, ids: list[str]) -> tuple[list[float], int]:
    times, committed = [], 0
    for sid in random.Random(7).sample(ids, min(WAKE, len(ids))):
        started = time.perf_counter()
        pending = await sessions.pending_proposals(sid)
        if pending:
            decision = await sessions.confirm(sid, pending[0].proposal_id, "bench-approver")
            committed += decision.status == "committed"
        times.append(round(time.perf_counter() - started, 3))
    return times, committed


async def run_cache(
    address: str,
    client_sessions: SessionClient,
    llm: ScriptedLLM,
    workdir: Path,
    cache: int,
    count: int,
    settle_s: float,
) -> CacheRun:
    queue = f"park-{cache}-{uuid.uuid4().hex[:6]}"
    db = StoreConfig.sqlite_file(workdir / f"{queue}.db").url
    worker = WorkerProcess(
        address, queue, db, workdir, ["--max-cached-workflows", str(cache)], tools=TOOLS
    )
    await worker.start()
    sessions = SessionClient(client_sessions.client, task_queue=queue, search_attributes=False)
    model = f"park-{cache}-{uuid.uuid4().hex[:6]}"
    llm.script(model, [], then=proposer)
    try:
        await asyncio.sleep(settle_s)
        before = rss_mb(worker.pid)
        cpu_before = cpu_s(worker.pid)
        started = time.perf_counter()
        # More messages in flight than the cache holds would measure cache thrash (every
        # workflow task replaying its history), not parking.
        in_flight = min(IN_FLIGHT, cache)
        ids, parked, curve = await park(sessions, llm, model, count, in_flight, worker.pid)
        park_wall = time.perf_counter() - started
        await asyncio.sleep(settle_s)
        after = rss_mb(worker.pid)
        cpu = cpu_s(worker.pid) - cpu_before
        wake_s, committed = await wake(sessions, ids)
    finally:
        await asyncio.to_thread(worker.stop)
    growth = after - before
    (n0, rss0), (n1, rss1) = curve[0], curve[-1]
    marginal = round(1024 * (rss1 - rss0) / (n1 - n0), 2) if n1 > n0 else None
    return CacheRun(
        max_cached_workflows=cache,
        sessions=count,
        parked=parked,
        failed=count - parked,
        park_wall_s=round(park_wall, 1),
        sessions_per_s=round(count / park_wall, 1),
        worker_rss_mb_before=before,
        worker_rss_mb_parked=after,
        worker_rss_mb_growth=round(growth, 1),
        worker_kb_per_parked_session=round(1024 * growth / max(parked, 1), 2),
        rss_curve=curve,
        marginal_kb_per_session=marginal,
        worker_cpu_s=round(cpu, 1),
        wake_s=wake_s,
        woken_committed=committed,
    )


async def run(count: int, caches: list[int], settle_s: float = SETTLE_S) -> list[CacheRun]:
    runs = []
    with tempfile.TemporaryDirectory(prefix="parked-") as tmp, ScriptedLLM() as llm:
        async with dev_server() as env:
            client_sessions = SessionClient(env.client, search_attributes=False)
            for cache in caches:
                result = await run_cache(
                    server_address(env), client_sessions, llm, Path(tmp), cache, count, settle_s
                )
                print(
                    f"cache {cache:>6}: {result.parked}/{count} parked in {result.park_wall_s}s "
                    f"({result.sessions_per_s}/s); worker RSS {result.worker_rss_mb_before} -> "
                    f"{result.worker_rss_mb_parked} MB "
                    f"({result.worker_kb_per_parked_session} KB/session, marginal "
                    f"{result.marginal_kb_per_session} KB); curve {result.rss_curve}; "
                    f"wake+confirm {result.wake_s}s",
                    flush=True,
                )
                runs.append(result)
    return runs


def main(argv: list[str] | None = None) -> ParkedReport:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--caches", default="100,10000", help="max_cached_workflows values")
    parser.add_argument("--quick", action="store_true", help="12 sessions, caches 4 and 20")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args(argv)
    try:
        caches = [int(c) for c in args.caches.split(",")]
    except ValueError:
        parser.error(f"BAD_CACHES: --caches must be comma-separated integers, got {args.caches!r}")
    if args.quick:
        args.sessions, caches = 12, [4, 20]
    if args.sessions < 1 or min(caches) < 1:
        parser.error("BAD_ARGUMENT: --sessions and every cache size must be positive")
    started = time.perf_counter()
    runs = asyncio.run(run(args.sessions, caches, 1.0 if args.quick else SETTLE_S))
    small, large = (
        min(runs, key=lambda r: r.max_cached_workflows),
        max(runs, key=lambda r: r.max_cached_workflows),
    )
    ratio = (
        round(large.worker_rss_mb_growth / small.worker_rss_mb_growth, 2)
        if small is not large and small.worker_rss_mb_growth > 0
        else None
    )
    report = ParkedReport(
        sessions=args.sessions,
        runs=runs,
        rss_growth_ratio_large_vs_small_cache=ratio,
        note="RSS growth = worker RSS after parking - before; a session beyond the cache "
        "bound lives only on the server (history) and in the store",
        machine=machine(),
        wall_s=round(time.perf_counter() - started, 1),
    )
    publish(report, args.output)
    return report


if __name__ == "__main__":
    main()
