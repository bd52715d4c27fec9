"""The driver side of ``bench.session_start_cost``: one fresh worker process per
(configuration, cache size), N sessions started through it, and what that cost it."""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel
from temporalio.client import Client

from bench.harness import bounded, cpu_s, dev_server, rss_mb, server_address, settings_for
from bench.start_cost_worker import HEAP, ConfigName, WorkerStats
from durable_loop.client.sessions import SessionClient
from durable_loop.testing import RecordedRequest, Reply, ScriptedLLM, reply

WARM_UP = 5
IN_FLIGHT = 16
SETTLE_S = 2.0


class Run(BaseModel):
    config: ConfigName
    max_cached_workflows: int
    sessions: int
    cached_sessions: int
    failed: int
    first_task_cpu_ms_p50: float
    first_task_cpu_ms_p90: float
    worker_cpu_ms_per_session: float
    worker_rss_mb_warm: float
    worker_rss_mb_after: float
    rss_growth_mb: float
    instance_kb: float
    python_heap_growth_mb: float | None = None
    """``--trace-heap``: the worker's traced Python heap over the N sessions."""
    wall_s: float
    errors: list[str] = []


def answer(_: RecordedRequest) -> Reply:
    return reply.text("hello")


class WorkerChild:
    """This module run as a worker process, spoken to over its stdin and stdout."""

    def __init__(
        self, config: ConfigName, address: str, queue: str, db: Path, cache: int, trace: bool
    ):
        self.env = {**os.environ, "PYTHONTRACEMALLOC": "1"} if trace else None
        self.args = [
            sys.executable, "-m", "bench.session_start_cost", "--worker", config,
            "--address", address, "--queue", queue, "--db", str(db), "--cache", str(cache),
        ]  # fmt: skip
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self) -> int:
        self.proc = await asyncio.create_subprocess_exec(
            *self.args, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=self.env
        )
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(self.proc.stdout.readline(), 120)
        if line.strip() != b"ready":
            raise RuntimeError(f"WORKER_NOT_READY: {line!r}")
        return self.proc.pid

    async def heap_mb(self) -> float:
        """The worker's traced Python heap (``--trace-heap``; 0 otherwise)."""
        assert self.proc is not None and self.proc.stdin is not None
        assert self.proc.stdout is not None
        self.proc.stdin.write(f"{HEAP}\n".encode())
        await self.proc.stdin.drain()
        return float(await asyncio.wait_for(self.proc.stdout.readline(), 120))

    async def stop(self) -> WorkerStats:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(b"stop\n")
        await self.proc.stdin.drain()
        out, _ = await asyncio.wait_for(self.proc.communicate(), 120)
        return WorkerStats.model_validate_json(out.decode().strip().splitlines()[-1])


async def start_sessions(
    sessions: SessionClient,
    llm: ScriptedLLM,
    model: str,
    count: int,
    in_flight: int,
    errors: list[str],
) -> int:
    settings = settings_for(llm, model)

    async def one() -> bool:
        sid = f"start-{uuid.uuid4().hex[:12]}"
        try:
            result = await sessions.start_and_send(sid, settings, "hello")
        except Exception as err:  # counted and reported, the other sessions go on
            errors.append(f"{type(err).__name__}: {err}")
            return False
        return result.status == "completed"

    done = await bounded([one for _ in range(count)], in_flight)
    llm.forget(model)
    return sum(done)


@dataclass(frozen=True)
class Plan:
    sessions: int
    caches: list[int]
    configs: list[ConfigName]
    settle_s: float
    trace_heap: bool


async def measure(
    client: Client,
    address: str,
    llm: ScriptedLLM,
    workdir: Path,
    config: ConfigName,
    cache: int,
    plan: Plan,
) -> Run:
    count, settle_s = plan.sessions, plan.settle_s
    queue = f"start-{config}-{cache}-{uuid.uuid4().hex[:6]}"
    model = f"m-{queue}"
    llm.script(model, [], then=answer)
    child = WorkerChild(config, address, queue, workdir / f"{queue}.db", cache, plan.trace_heap)
    pid = await child.start()
    sessions = SessionClient(client, task_queue=queue, search_attributes=False)
    errors: list[str] = []
    try:
        # more messages in flight than the cache holds would measure cache thrash
        in_flight = min(IN_FLIGHT, cache)
        await start_sessions(sessions, llm, model, WARM_UP, in_flight, errors)
        await asyncio.sleep(settle_s)
        heap_warm = await child.heap_mb()
        warm, cpu_before, started = rss_mb(pid), cpu_s(pid), time.perf_counter()
        completed = await start_sessions(sessions, llm, model, count, in_flight, errors)
        wall = time.perf_counter() - started
        cpu = cpu_s(pid) - cpu_before
        await asyncio.sleep(settle_s)
        after = rss_mb(pid)
        heap_growth = await child.heap_mb() - heap_warm
    finally:
        stats = await child.stop()
    measured = stats.first_task_ms[WARM_UP:] or stats.first_task_ms
    cached = min(count, cache)
    deciles = statistics.quantiles(measured, n=10) if len(measured) > 1 else measured * 9
    return Run(
        config=config,
        max_cached_workflows=cache,
        sessions=count,
        cached_sessions=cached,
        failed=count - completed,
        first_task_cpu_ms_p50=round(statistics.median(measured), 2),
        first_task_cpu_ms_p90=round(deciles[8], 2),
        worker_cpu_ms_per_session=round(1000 * cpu / count, 2),
        worker_rss_mb_warm=warm,
        worker_rss_mb_after=after,
        rss_growth_mb=round(after - warm, 1),
        instance_kb=stats.instance_kb,
        python_heap_growth_mb=round(heap_growth, 2) if plan.trace_heap else None,
        wall_s=round(wall, 1),
        errors=errors[:5],
    )


async def run(plan: Plan) -> list[Run]:
    runs: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="start-cost-") as tmp, ScriptedLLM() as llm:
        async with dev_server() as env:
            for cache in plan.caches:
                for config in plan.configs:
                    address = server_address(env)
                    result = await measure(env.client, address, llm, Path(tmp), config, cache, plan)
                    print(
                        f"cache {cache:>5} {config:<17} first task CPU p50 "
                        f"{result.first_task_cpu_ms_p50:6.2f} ms (p90 "
                        f"{result.first_task_cpu_ms_p90:6.2f}); worker CPU/session "
                        f"{result.worker_cpu_ms_per_session:6.1f} ms; RSS "
                        f"{result.worker_rss_mb_warm} -> {result.worker_rss_mb_after} MB "
                        f"with {result.cached_sessions} cached; instance "
                        f"{result.instance_kb} KB heap; failed {result.failed}",
                        flush=True,
                    )
                    runs.append(result)
    return runs
