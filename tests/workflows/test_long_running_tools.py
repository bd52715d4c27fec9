"""Long-running tools on their own task queue: heartbeats, cancellation with the session,
and a parallel batch with per-call timeouts that keeps the emitted order."""

from __future__ import annotations

import asyncio
import json
import time
from contextlib import asynccontextmanager

import pytest
from temporalio import activity
from temporalio.client import WorkflowFailureError

from durable_loop.client.trace import decode_run
from durable_loop.core.names import long_running_queue
from durable_loop.core.registry import ToolContext, ToolRegistry
from durable_loop.testing import reply
from durable_loop.testing.history import EventType, events_of
from durable_loop.worker.builder import WorkerDeps, build_tool_worker, new_http_client
from tests.conftest import settings_for, unique
from tests.workflows.toolkit import ToolLog


class Seen:
    def __init__(self) -> None:
        self.queues: list[str] = []
        self.started = asyncio.Event()
        self.cancelled = asyncio.Event()


def long_tools(log: ToolLog, seen: Seen) -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool(long_running=True, heartbeat_timeout_s=1, timeout_s=120)
    async def crunch(seconds: float, ctx: ToolContext) -> str:
        """Work for a long time (longer than the heartbeat timeout)."""
        execution = log.start("crunch", {"seconds": seconds}, ctx)
        seen.queues.append(activity.info().task_queue)
        seen.started.set()
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            seen.cancelled.set()
            raise
        execution.finished = time.monotonic()
        return f"crunched {seconds}"

    @registry.tool(timeout_s=0.5)
    async def quick(seconds: float, ctx: ToolContext) -> str:
        """Sleep; allowed half a second."""
        execution = log.start("quick", {"seconds": seconds}, ctx)
        await asyncio.sleep(seconds)
        execution.finished = time.monotonic()
        return f"quick {seconds}"

    @registry.tool()
    def plain(ctx: ToolContext) -> str:
        """An ordinary tool."""
        log.start("plain", {}, ctx)
        seen.queues.append(activity.info().task_queue)
        return "plain"

    return registry


@asynccontextmanager
async def long_running_pool(temporal_env, w, registry):
    http = new_http_client()
    deps = WorkerDeps(store=w.store, registry=registry, http=http, environ={})
    queue = long_running_queue(w.task_queue)
    try:
        async with build_tool_worker(temporal_env.client, deps, task_queue=queue):
            yield queue
    finally:
        await http.aclose()


async def test_long_running_tool_runs_on_its_own_queue_and_heartbeats(
    loop_worker, scripted_llm, temporal_env
):
    model, sid, log, seen = unique("m"), unique("s"), ToolLog(), Seen()
    scripted_llm.script(
        model,
        [reply.tool_calls(("crunch", {"seconds": 2.5}), ("plain", {})), reply.text("done")],
    )
    registry = long_tools(log, seen)
    async with loop_worker(registry) as w, long_running_pool(temporal_env, w, registry) as queue:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        result = await w.sessions.send(sid, "crunch")
        (history,) = await w.histories(sid)
    print("EVENTS", [EventType.Name(e.event_type) for e in history.events])
    print("EXEC", [(e.name, e.attempt) for e in log.executions])
    assert result.status == "completed", result
    assert [(t.name, t.ok) for t in result.tool_calls] == [("crunch", True), ("plain", True)]
    assert sorted(seen.queues) == sorted([queue, w.task_queue])
    scheduled = {
        e.activity_task_scheduled_event_attributes.activity_type.name: (
            e.activity_task_scheduled_event_attributes
        )
        for e in events_of(history, EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
    }
    long = scheduled["run_long_tool"]
    assert long.task_queue.name == queue
    assert long.heartbeat_timeout.ToTimedelta().total_seconds() == 1
    assert scheduled["run_tool"].task_queue.name == w.task_queue
    traced = decode_run(history.events, history.run_id, 0)
    assert sorted(r.input.name for r in traced.tool_runs) == ["crunch", "plain"]
    # Without heartbeats the 1 s heartbeat timeout would fail the first attempt and the
    # tool would run again on a retry.
    assert [e.attempt for e in log.executions if e.name == "crunch"] == [1]
    types = {e.event_type for e in history.events}
    assert EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT not in types


async def test_cancelling_the_session_cancels_the_running_tool(
    loop_worker, scripted_llm, temporal_env
):
    model, sid, log, seen = unique("m"), unique("s"), ToolLog(), Seen()
    scripted_llm.script(model, [reply.tool_call("crunch", {"seconds": 60})])
    registry = long_tools(log, seen)
    async with loop_worker(registry) as w, long_running_pool(temporal_env, w, registry):
        handle = await w.sessions.start(sid, settings_for(scripted_llm, model))
        await w.sessions.post(sid, "crunch for a minute")
        await asyncio.wait_for(seen.started.wait(), timeout=20)
        await handle.cancel()
        await asyncio.wait_for(seen.cancelled.wait(), timeout=20)
        with pytest.raises(WorkflowFailureError):
            await asyncio.wait_for(handle.result(), timeout=20)
        (history,) = await w.histories(sid)
    assert log.count("crunch") == 1
    types = [e.event_type for e in history.events]
    assert EventType.EVENT_TYPE_ACTIVITY_TASK_CANCELED in types
    assert types[-1] == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED


async def test_parallel_batch_with_per_call_timeouts_keeps_emitted_order(
    loop_worker, scripted_llm, temporal_env
):
    model, sid, log, seen = unique("m"), unique("s"), ToolLog(), Seen()
    calls = [
        ("crunch", {"seconds": 3}, "c_long"),
        ("quick", {"seconds": 3}, "c_timeout"),
        ("quick", {"seconds": 0.1}, "c_fast"),
        ("plain", {}, "c_plain"),
    ]
    scripted_llm.script(model, [reply.tool_calls(*calls), reply.text("done")])
    registry = long_tools(log, seen)
    async with loop_worker(registry) as w, long_running_pool(temporal_env, w, registry):
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        result = await w.sessions.send(sid, "all at once")
        stored = await w.store.read(sid)
    long_run = next(e for e in log.executions if e.name == "crunch")
    fast = next(e for e in log.executions if e.args.get("seconds") == 0.1)
    assert 0 < fast.finished < long_run.finished, "the batch ran one call after another"
    rows = [m for m in stored if m.message.role == "tool"]
    assert [m.message.tool_call_id for m in rows] == ["c_long", "c_timeout", "c_fast", "c_plain"]
    assert [m.seq for m in rows] == [2, 3, 4, 5]
    codes = [json.loads(m.message.envelope.to_content())["errors"] for m in rows]
    assert [c[0]["code"] if c else None for c in codes] == [None, "TOOL_TIMEOUT", None, None]
    assert [t.call_id for t in result.tool_calls] == ["c_long", "c_timeout", "c_fast", "c_plain"]
