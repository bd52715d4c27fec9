"""What the load benchmarks share: an embedded dev server, a scripted endpoint, durable-loop
workers on a SQLite store, a scripted model that makes T tool turns per message, and
sessions driven concurrently."""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel
from temporalio.testing import WorkflowEnvironment

from durable_loop.cli.devserver import start_local_environment
from durable_loop.client.sessions import SessionClient
from durable_loop.core.config import RuntimeConfig
from durable_loop.core.config import SessionSettings as Settings
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.registry import ToolRegistry
from durable_loop.core.retry import RetrySettings
from durable_loop.store import StoreConfig, TranscriptStore, open_store
from durable_loop.testing import RecordedRequest, Reply, ScriptedLLM, reply
from durable_loop.worker.builder import WorkerDeps, WorkerTuning, build_worker, new_http_client

T = TypeVar("T")
RETRY = RetrySettings(initial_interval_s=0.1, maximum_interval_s=1.0, maximum_attempts=3)
NOOP = "noop"


def publish(report: BaseModel, output: Path, say: Callable[[str], object] = print) -> None:
    """Write the report to ``output`` and print it as the last line (one JSON object)."""
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(report.model_dump_json(indent=2) + "\n")
    say(f"written to {output}")
    sys.stdout.flush()
    print(report.model_dump_json(), flush=True)


def noop_tools() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool(name=NOOP)
    async def noop(n: int) -> dict[str, int]:
        """Do nothing and say so."""
        return {"n": n}

    return registry


class ToolTurns:
    """A scripted model: after a user message it makes ``tool_turns`` tool turns of
    ``calls`` calls each (arguments differ per turn, so no repeat guard fires), then
    answers in text. Decided from the conversation, so any number of sessions can share it."""

    def __init__(self, tool_turns: int, *, tool: str = NOOP, calls: int = 1) -> None:
        self.tool_turns = tool_turns
        self.tool = tool
        self.calls = calls

    def turns_done(self, messages: list[dict[str, object]]) -> int:
        done = 0
        for message in reversed(messages):
            if message.get("role") == "user":
                break
            if message.get("role") == "assistant" and message.get("tool_calls"):
                done += 1
        return done

    def __call__(self, request: RecordedRequest) -> Reply:
        done = self.turns_done(request.messages)
        if done >= self.tool_turns:
            return reply.text(f"done after {done} tool turns")
        calls = [
            (self.tool, {"n": done * self.calls + i}, f"c{done}_{i}") for i in range(self.calls)
        ]
        return reply.tool_calls(*calls)


def settings_for(
    llm: ScriptedLLM, model: str, runtime: RuntimeConfig | None = None, timeout_s: float = 60.0
) -> Settings:
    return Settings(
        llm=LlmEndpoint(model=model, base_url=llm.base_url, timeout_s=timeout_s, retry=RETRY),
        runtime=runtime or RuntimeConfig(),
    )


@asynccontextmanager
async def dev_server(
    *extra_args: str, dynamic_config: dict[str, int] | None = None
) -> AsyncIterator[WorkflowEnvironment]:
    """The embedded dev server, in memory."""
    env = await start_local_environment(*extra_args, dynamic_config=dynamic_config)
    try:
        yield env
    finally:
        await env.shutdown()


class DurableWorker(BaseModel, arbitrary_types_allowed=True):
    sessions: SessionClient
    store: TranscriptStore
    task_queue: str


@asynccontextmanager
async def durable_worker(
    env: WorkflowEnvironment,
    registry: ToolRegistry,
    workdir: Path,
    *,
    tuning: WorkerTuning | None = None,
) -> AsyncIterator[DurableWorker]:
    """durable-loop's own worker (``build_worker``) on a fresh queue and SQLite file."""
    queue = f"bench-{uuid.uuid4().hex[:8]}"
    store = open_store(StoreConfig.sqlite_file(workdir / f"{queue}.db"))
    http = new_http_client()
    deps = WorkerDeps(store=store, registry=registry, http=http, environ={})
    try:
        async with build_worker(env.client, deps, task_queue=queue, tuning=tuning):
            yield DurableWorker(
                sessions=SessionClient(env.client, task_queue=queue, search_attributes=False),
                store=store,
                task_queue=queue,
            )
    finally:
        await http.aclose()
        await store.close()


async def bounded(calls: list[Callable[[], Awaitable[T]]], limit: int) -> list[T]:
    """Run the calls with at most ``limit`` in flight, results in order."""
    gate = asyncio.Semaphore(limit)

    async def one(call: Callable[[], Awaitable[T]]) -> T:
        async with gate:
            return await call()

    return await asyncio.gather(*(one(c) for c in calls))


def rss_mb(pid: int | None = None) -> float:
    """Resident set size of a process (default: this one), from /proc."""
    path = Path(f"/proc/{pid or os.getpid()}/status")
    for line in path.read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    raise RuntimeError(f"no VmRSS in {path}")


def median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0


def machine() -> dict[str, object]:
    return {"cpus": os.cpu_count(), "load_avg_1m": round(os.getloadavg()[0], 2)}


def cpu_s(pid: int) -> float:
    """User + system CPU seconds a process has used, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tuning_args(tuning: WorkerTuning) -> list[str]:
    """``durable-loop worker`` flags for a tuning (unset fields keep the SDK default)."""
    args: list[str] = []
    for name, value in tuning.model_dump(exclude_none=True).items():
        flag = name.replace("_", "-")
        if isinstance(value, bool):
            args.append(f"--{flag}" if value else f"--no-{flag}")
        else:
            args += [f"--{flag}", str(value)]
    return args


def server_address(env: WorkflowEnvironment) -> str:
    return env.client.service_client.config.target_host


def server_pid(env: WorkflowEnvironment) -> int | None:
    """The dev server process behind ``env`` (found by its port in /proc), if any."""
    port = server_address(env).rpartition(":")[2]
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"start-dev" in cmdline and port.encode() in cmdline:
            return int(entry.name)
    return None
