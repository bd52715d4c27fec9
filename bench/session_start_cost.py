"""Session start cost: the worker CPU of a session's first workflow task and the worker
memory each cached session holds, for several workflow sandbox configurations side by side
in one run, at a couple of ``max_cached_workflows`` values.

For every (configuration, cache size) a fresh worker process is started (this module with
``--worker``: durable-loop's plugin, its activities, a SQLite store) on one embedded dev
server; N sessions are each started by update-with-start with one message, answered in
text by a zero-latency scripted endpoint. Then:

* **first workflow task CPU**: the worker's workflow runner is wrapped in a timer that
  reads ``time.thread_time()`` around creating the workflow instance (where the sandbox
  imports the workflow modules) and around its first activation, in the thread that runs
  them. Thread CPU time counts only this work, not other threads or processes, nor the time
  spent waiting for the GIL or a core, so it stays accurate on a loaded machine (wall time
  would not). What it leaves out (the SDK core and the asyncio side of the task) is the
  same for every configuration.
* **memory per cached session**: the worker's RSS (from /proc) after N sessions minus its
  RSS after a few warm-up sessions, divided by the sessions the cache holds
  (``min(N, cache)``). A fresh process per run keeps one run's freed memory from hiding the
  next run's growth.
* **worker CPU per session**: the worker process's CPU seconds over the N sessions (from
  /proc: workflow tasks, activities, SDK core) divided by N.

Configurations: ``sdk_default`` (``SandboxRestrictions.default``), ``core_passthrough``
(durable-loop's plugin before this benchmark: ``durable_loop.core`` passed through),
``durable_loop`` (the plugin now: :mod:`durable_loop.worker.sandbox`), ``all_passthrough``
(``sandbox_passthrough=True``: all of durable_loop passed through, workflow modules too)
and ``unsandboxed`` (no sandbox at all: the floor).

    .venv/bin/python -m bench.session_start_cost [--sessions 200] [--caches 50,200]
        [--configs sdk_default,core_passthrough,durable_loop,...] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel
from temporalio.api.common.v1 import Payloads
from temporalio.api.failure.v1 import Failure
from temporalio.bridge.proto.workflow_activation import WorkflowActivation
from temporalio.bridge.proto.workflow_completion import WorkflowActivationCompletion
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter, SerializationContext, StorageDriverStoreContext
from temporalio.worker import (
    UnsandboxedWorkflowRunner,
    Worker,
    WorkflowInstance,
    WorkflowInstanceDetails,
    WorkflowRunner,
)
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions
from temporalio.worker.workflow_sandbox._runner import _fake_info
from temporalio.workflow import Info, _Definition

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
from durable_loop.client.sessions import SessionClient
from durable_loop.core.registry import ToolRegistry
from durable_loop.store import StoreConfig, open_store
from durable_loop.testing import RecordedRequest, Reply, ScriptedLLM, reply
from durable_loop.worker.deps import WorkerDeps, new_http_client
from durable_loop.worker.plugin import DurableLoopPlugin
from durable_loop.worker.sandbox import CORE_MODULES, sandboxed_runner
from durable_loop.workflows.session import SessionWorkflow

ConfigName = Literal[
    "sdk_default", "core_passthrough", "durable_loop", "all_passthrough", "unsandboxed"
]
CONFIGS: tuple[ConfigName, ...] = (
    "sdk_default",
    "core_passthrough",
    "durable_loop",
    "all_passthrough",
    "unsandboxed",
)
BEFORE: ConfigName = "core_passthrough"
AFTER: ConfigName = "durable_loop"
TARGET_FIRST_TASK_MS = 15.0
TARGET_KB_PER_CACHED_SESSION = 64.0
WARM_UP = 5
HEAP = "heap"
IN_FLIGHT = 16
PROBE_INSTANCES = 20
SETTLE_S = 2.0
DEFAULT_OUTPUT = Path(__file__).parent / "results" / "session_start_cost.json"


def runner_for(config: ConfigName) -> WorkflowRunner:
    if config == "sdk_default":
        return SandboxedWorkflowRunner(restrictions=SandboxRestrictions.default)
    if config == "core_passthrough":
        restrictions = SandboxRestrictions.default.with_passthrough_modules(CORE_MODULES)
        return SandboxedWorkflowRunner(restrictions=restrictions)
    if config == "durable_loop":
        return sandboxed_runner(None)
    if config == "all_passthrough":
        return sandboxed_runner(None, everything=True)
    return UnsandboxedWorkflowRunner()


# ------------------------------------------------------------------ worker process side


class _TimedInstance(WorkflowInstance):
    def __init__(
        self, inner: WorkflowInstance, create_s: float, record: Callable[[float], None]
    ) -> None:
        self.inner = inner
        self.create_s = create_s
        self.record: Callable[[float], None] | None = record

    def activate(self, act: WorkflowActivation) -> WorkflowActivationCompletion:
        started = time.thread_time()
        completion = self.inner.activate(act)
        if self.record is not None:
            self.record(self.create_s + time.thread_time() - started)
            self.record = None
        return completion

    def get_serialization_context(self, command_info: object) -> SerializationContext | None:
        return self.inner.get_serialization_context(command_info)  # type: ignore[arg-type]

    def get_external_store_context(self, command_info: object) -> StorageDriverStoreContext:
        return self.inner.get_external_store_context(command_info)  # type: ignore[arg-type]

    def get_info(self) -> Info:
        return self.inner.get_info()

    def get_thread_id(self) -> int | None:
        return self.inner.get_thread_id()


class TimedRunner(WorkflowRunner):
    """A workflow runner that records the thread CPU seconds of each instance's creation
    plus first activation: the CPU of a new session's first workflow task."""

    def __init__(self, inner: WorkflowRunner) -> None:
        self.inner = inner
        self.first_task_s: list[float] = []

    def prepare_workflow(self, defn: object) -> None:
        self.inner.prepare_workflow(defn)  # type: ignore[arg-type]

    def create_instance(self, det: WorkflowInstanceDetails) -> WorkflowInstance:
        started = time.thread_time()
        inner = self.inner.create_instance(det)
        return _TimedInstance(inner, time.thread_time() - started, self.first_task_s.append)

    def set_worker_level_failure_exception_types(self, types: object) -> None:
        self.inner.set_worker_level_failure_exception_types(types)  # type: ignore[arg-type]


class WorkerStats(BaseModel):
    first_task_ms: list[float]
    instance_kb: float
    """Python heap held by one new session workflow instance (tracemalloc)."""


def instance_kb(runner: WorkflowRunner, count: int = PROBE_INSTANCES) -> float:
    """The Python heap one new session workflow instance holds under ``runner``: the
    sandbox's own modules and the workflow object, measured by tracemalloc over ``count``
    instances created the way the worker creates them (before the worker serves, so no
    other work is traced). Must be called with an event loop running."""
    details = probe_details(SessionWorkflow)
    runner.prepare_workflow(details.defn)
    runner.create_instance(details)  # the first one imports on the host
    gc.collect()
    tracing = tracemalloc.is_tracing()  # --trace-heap: traced from the start
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        held = [runner.create_instance(details) for _ in range(count)]
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        if not tracing:
            tracemalloc.stop()
    del held
    return round(grown / count / 1024, 1)


def probe_details(workflow: type) -> WorkflowInstanceDetails:
    """Details for a workflow instance that is created but never activated (the SDK's own
    validation in ``prepare_workflow`` does the same)."""
    default = DataConverter.default
    return WorkflowInstanceDetails(
        payload_converter_factory=default._new_payload_converter,
        failure_converter_class=default.failure_converter_class,
        interceptor_classes=[],
        defn=_Definition.must_from_class(workflow),
        info=_fake_info,
        randomness_seed=-1,
        extern_functions={},
        disable_eager_activity_execution=False,
        worker_level_failure_exception_types=[],
        patch_activation_callback=None,
        last_completion_result=Payloads(),
        last_failure=Failure(),
    )


async def serve(config: ConfigName, address: str, queue: str, db: Path, cache: int) -> None:
    """The worker process: prints ``ready``, runs until stdin closes or says ``stop``,
    then prints its :class:`WorkerStats` as one JSON line."""
    client = await Client.connect(address, data_converter=pydantic_data_converter)
    store = open_store(StoreConfig.sqlite_file(db))
    http = new_http_client()
    deps = WorkerDeps(store=store, registry=ToolRegistry(), http=http, environ={})
    inner = runner_for(config)
    probed = instance_kb(inner)
    runner = TimedRunner(inner)
    worker = Worker(
        client,
        task_queue=queue,
        plugins=[DurableLoopPlugin(deps)],
        workflow_runner=runner,
        max_cached_workflows=cache,
    )
    try:
        async with worker:
            print("ready", flush=True)
            while (await asyncio.to_thread(sys.stdin.readline)).strip() == HEAP:
                gc.collect()
                traced = tracemalloc.get_traced_memory()[0] if tracemalloc.is_tracing() else 0
                print(round(traced / 2**20, 2), flush=True)
    finally:
        await http.aclose()
        await store.close()
    first = [round(1000 * s, 3) for s in runner.first_task_s]
    stats = WorkerStats(first_task_ms=first, instance_kb=probed)
    print(stats.model_dump_json(), flush=True)


# ------------------------------------------------------------------ driver side


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


class StartCostReport(BaseModel):
    sessions: int
    caches: list[int]
    runs: list[Run]
    before: ConfigName
    after: ConfigName
    summary: Summary
    """Per configuration: first task CPU (median over the runs of each run's p50);
    KB per cached session (worker RSS: the slope of RSS growth over the sessions the cache
    holds, the same N sessions at each cache size, so what the sessions leave outside the
    cache cancels out); the Python heap of one new session workflow instance
    (tracemalloc); with ``--trace-heap``, the Python heap's own slope."""
    target_met: bool
    traced_heap: bool
    note: str
    machine: dict[str, object]
    wall_s: float


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


class Summary(BaseModel):
    first_task_cpu_ms: dict[str, float] = {}
    kb_per_cached_session: dict[str, float] = {}
    instance_kb: dict[str, float] = {}
    python_heap_kb_per_cached_session: dict[str, float] = {}


def slope_kb(runs: list[Run], growth_mb: Callable[[Run], float | None]) -> float | None:
    """KB per cached session: the slope of growth over the sessions the cache holds."""
    points = [(float(r.cached_sessions), growth_mb(r)) for r in runs]
    xs = [x for x, y in points if y is not None]
    ys = [1024 * y for _, y in points if y is not None]
    if len(set(xs)) < 2:
        return None
    return round(statistics.linear_regression(xs, ys).slope, 1)


def summarise(runs: list[Run], configs: list[ConfigName]) -> Summary:
    summary = Summary()
    for config in configs:
        mine = [r for r in runs if r.config == config]
        p50 = statistics.median(r.first_task_cpu_ms_p50 for r in mine)
        summary.first_task_cpu_ms[config] = round(p50, 2)
        summary.instance_kb[config] = round(statistics.median(r.instance_kb for r in mine), 1)
        rss = slope_kb(mine, lambda r: r.rss_growth_mb)
        if rss is not None:
            summary.kb_per_cached_session[config] = rss
        heap = slope_kb(mine, lambda r: r.python_heap_growth_mb)
        if heap is not None:
            summary.python_heap_kb_per_cached_session[config] = heap
    return summary


def main(argv: list[str] | None = None) -> StartCostReport | None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=300)
    parser.add_argument("--caches", default="20,100,300", help="max_cached_workflows values")
    parser.add_argument("--configs", default=",".join(CONFIGS))
    parser.add_argument(
        "--quick", action="store_true", help="8 sessions, caches 4 and 8, before and after"
    )
    parser.add_argument(
        "--trace-heap",
        action="store_true",
        help="run the workers under tracemalloc to split RSS into Python heap and the rest "
        "(CPU figures are then inflated)",
    )
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--worker", choices=CONFIGS, help=argparse.SUPPRESS)
    parser.add_argument("--address", help=argparse.SUPPRESS)
    parser.add_argument("--queue", help=argparse.SUPPRESS)
    parser.add_argument("--db", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--cache", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        asyncio.run(serve(args.worker, args.address, args.queue, args.db, args.cache))
        return None
    try:
        caches = [int(c) for c in args.caches.split(",")]
    except ValueError:
        parser.error(f"BAD_CACHES: --caches must be comma-separated integers, got {args.caches!r}")
    configs = [c for c in args.configs.split(",") if c]
    unknown = set(configs) - set(CONFIGS)
    if unknown:
        parser.error(f"BAD_CONFIGS: unknown {sorted(unknown)}; known: {list(CONFIGS)}")
    if args.quick:
        args.sessions, caches, configs = 8, [4, 8], [BEFORE, AFTER]
    if args.sessions < 2 or min(caches) < 1 or len(set(caches)) < 2:
        parser.error(
            "BAD_ARGUMENT: --sessions must be at least 2, every cache positive, and there "
            "must be two cache sizes or more (memory per session is a slope)"
        )
    started = time.perf_counter()
    plan = Plan(
        sessions=args.sessions,
        caches=caches,
        configs=configs,
        settle_s=0.5 if args.quick else SETTLE_S,
        trace_heap=args.trace_heap,
    )
    runs = asyncio.run(run(plan))
    summary = summarise(runs, plan.configs)
    met = (
        summary.first_task_cpu_ms.get(AFTER, float("inf")) <= TARGET_FIRST_TASK_MS
        and summary.kb_per_cached_session.get(AFTER, float("inf")) <= TARGET_KB_PER_CACHED_SESSION
    )
    report = StartCostReport(
        sessions=args.sessions,
        caches=caches,
        runs=runs,
        before=BEFORE,
        after=AFTER,
        summary=summary,
        target_met=met,
        traced_heap=plan.trace_heap,
        note="first task CPU = thread CPU of creating the workflow instance + its first "
        "activation; KB per cached session = slope of worker RSS growth (N sessions, "
        "fresh worker process per run) over min(N, max_cached_workflows)",
        machine=machine(),
        wall_s=round(time.perf_counter() - started, 1),
    )
    publish(report, args.output)
    return report


if __name__ == "__main__":
    main()
