"""Run one session of N turns through each loop against a live Temporal server and measure
its real history."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel
from temporalio.client import Client, WorkflowHandle
from temporalio.service import RPCError
from temporalio.worker import Worker

from bench.common import (
    ConversationScript,
    HistoryStats,
    expected_last_request_messages,
    failure_reason,
    measure,
    page_tools,
)
from bench.naive_activities import NaiveActivities
from bench.naive_loop import (
    NAIVE_CLOSE,
    NAIVE_SEND,
    NAIVE_WORKFLOW,
    NaiveReply,
    NaiveSessionEnd,
    NaiveSessionInput,
    NaiveSessionWorkflow,
)
from durable_loop.client.history import fetch_histories
from durable_loop.client.sessions import SessionClient
from durable_loop.core import names
from durable_loop.core.config import RuntimeConfig
from durable_loop.core.config import SessionSettings as Settings
from durable_loop.core.contracts import CloseRequest, UserMessage
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.retry import RetrySettings
from durable_loop.core.runtime_groups import HistoryConfig
from durable_loop.store import StoreConfig, open_store
from durable_loop.testing import ScriptedLLM
from durable_loop.worker.builder import WorkerDeps, WorkerTuning, build_worker, new_http_client

LoopName = Literal["durable_loop", "naive"]
RETRY = RetrySettings(initial_interval_s=0.1, maximum_interval_s=1.0, maximum_attempts=3)

# One session at a time: a few slots and pollers are plenty, a small cache keeps memory flat.
TUNING = WorkerTuning(
    max_concurrent_activities=8,
    max_concurrent_workflow_tasks=4,
    max_concurrent_local_activities=8,
    max_cached_workflows=8,
    workflow_task_pollers=2,
    activity_task_pollers=2,
)


@dataclass(frozen=True)
class BenchConfig:
    workdir: Path
    continue_as_new_after_events: int
    turn_timeout_s: float


class LoopRun(BaseModel):
    loop: LoopName
    size: int
    turns_done: int
    failed_at_turn: int | None = None
    reason: str | None = None
    wall_s: float
    history: HistoryStats
    llm_requests: int
    last_request_messages: int
    continuity_ok: bool

    @property
    def bytes_per_turn(self) -> float | None:
        return self.history.bytes / self.turns_done if self.turns_done else None


def endpoint_for(llm: ScriptedLLM, model: str) -> LlmEndpoint:
    return LlmEndpoint(model=model, base_url=llm.base_url, timeout_s=30.0, retry=RETRY)


def question(turn: int) -> str:
    return f"Read page {turn} and tell me when you are done."


async def run_durable(
    client: Client, llm: ScriptedLLM, script: ConversationScript, size: int, cfg: BenchConfig
) -> LoopRun:
    model = f"durable-{size}-{uuid.uuid4().hex[:8]}"
    session_id = f"bench-{size}-{uuid.uuid4().hex[:8]}"
    llm.script(model, [], then=script)
    settings = Settings(
        llm=endpoint_for(llm, model),
        runtime=RuntimeConfig(
            history=HistoryConfig(continue_as_new_after_events=cfg.continue_as_new_after_events)
        ),
    )
    store = open_store(StoreConfig.sqlite_file(cfg.workdir / f"{session_id}.db"))
    http = new_http_client()
    deps = WorkerDeps(store=store, registry=page_tools(), http=http, environ={})
    queue = f"bench-durable-{uuid.uuid4().hex[:8]}"
    sessions = SessionClient(client, task_queue=queue)
    done, failed_at, reason = 0, None, None
    started = time.perf_counter()
    try:
        async with build_worker(client, deps, task_queue=queue, tuning=TUNING):
            await sessions.start(session_id, settings)
            for turn in range(1, size + 1):
                try:
                    result = await asyncio.wait_for(
                        sessions.send(session_id, question(turn)), cfg.turn_timeout_s
                    )
                except Exception as err:
                    failed_at, reason = turn, f"{type(err).__name__}: {err}"
                    break
                llm.forget(model)
                if result.status != "completed" or len(result.tool_calls) != 1:
                    failed_at, reason = turn, f"unexpected result: {result.model_dump_json()}"
                    break
                done = turn
            wall = time.perf_counter() - started
            messages_done = await _finish_session(sessions, session_id, failed=failed_at)
        stored = await store.read(session_id)
    finally:
        await http.aclose()
        await store.close()
    histories = await fetch_histories(client, names.session_workflow_id(session_id))
    if failed_at is not None:
        reason = _with_server_reason(reason, failure_reason(histories))
    continuity = (
        messages_done == done
        and len(stored) == 4 * done
        and script.last_message_count.get(model, 0) == expected_last_request_messages(done)
    )
    return LoopRun(
        loop="durable_loop",
        size=size,
        turns_done=done,
        failed_at_turn=failed_at,
        reason=reason,
        wall_s=wall,
        history=measure(histories),
        llm_requests=script.requests.get(model, 0),
        last_request_messages=script.last_message_count.get(model, 0),
        continuity_ok=continuity,
    )


async def run_naive(
    client: Client, llm: ScriptedLLM, script: ConversationScript, size: int, cfg: BenchConfig
) -> LoopRun:
    model = f"naive-{size}-{uuid.uuid4().hex[:8]}"
    workflow_id = f"naive-{size}-{uuid.uuid4().hex[:8]}"
    llm.script(model, [], then=script)
    registry = page_tools()
    http = new_http_client()
    queue = f"bench-naive-{uuid.uuid4().hex[:8]}"
    worker = Worker(
        client,
        task_queue=queue,
        workflows=[NaiveSessionWorkflow],
        activities=NaiveActivities(http, registry).all(),  # type: ignore[arg-type]
        max_concurrent_activities=TUNING.max_concurrent_activities,
        max_concurrent_workflow_tasks=TUNING.max_concurrent_workflow_tasks,
        max_cached_workflows=TUNING.max_cached_workflows or 0,
    )
    done, failed_at, reason = 0, None, None
    started = time.perf_counter()
    try:
        async with worker:
            handle: WorkflowHandle[
                NaiveSessionWorkflow, NaiveSessionEnd
            ] = await client.start_workflow(
                NAIVE_WORKFLOW,
                NaiveSessionInput(endpoint=endpoint_for(llm, model), tools=registry.specs()),
                id=workflow_id,
                task_queue=queue,
                result_type=NaiveSessionEnd,
            )
            for turn in range(1, size + 1):
                try:
                    result = await asyncio.wait_for(
                        handle.execute_update(
                            NAIVE_SEND, UserMessage(text=question(turn)), result_type=NaiveReply
                        ),
                        cfg.turn_timeout_s,
                    )
                except Exception as err:
                    failed_at, reason = turn, f"{type(err).__name__}: {err}"
                    break
                llm.forget(model)
                if result.tool_calls != 1 or not result.reply:
                    failed_at, reason = turn, f"unexpected reply: {result.model_dump_json()}"
                    break
                done = turn
            wall = time.perf_counter() - started
            histories = await fetch_histories(client, workflow_id)
            if failed_at is None:
                await handle.signal(NAIVE_CLOSE, CloseRequest(reason="bench finished"))
                await handle.result()
                histories = await fetch_histories(client, workflow_id)
            else:
                reason = _with_server_reason(reason, failure_reason(histories))
                with contextlib.suppress(RPCError):
                    await handle.terminate("bench: naive loop stopped")
    finally:
        await http.aclose()
    return LoopRun(
        loop="naive",
        size=size,
        turns_done=done,
        failed_at_turn=failed_at,
        reason=reason,
        wall_s=wall,
        history=measure(histories),
        llm_requests=script.requests.get(model, 0),
        last_request_messages=script.last_message_count.get(model, 0),
        continuity_ok=script.last_message_count.get(model, 0)
        >= expected_last_request_messages(done),
    )


async def _finish_session(sessions: SessionClient, session_id: str, *, failed: int | None) -> int:
    """Close the session; returns how many messages it says it finished (-1 if unknown)."""
    try:
        status = await sessions.status(session_id)
    except RPCError:
        status = None
    if failed is None:
        await sessions.close(session_id, "bench finished")
        await sessions.handle(session_id).result()
    else:
        with contextlib.suppress(RPCError):
            await sessions.handle(session_id).terminate("bench: durable loop stopped")
    return status.messages_done if status else -1


def _with_server_reason(client_side: str | None, server_side: str | None) -> str | None:
    if server_side and client_side:
        return f"{server_side} (caller saw {client_side})"
    return server_side or client_side
