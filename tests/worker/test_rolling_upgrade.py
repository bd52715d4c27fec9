"""A rolling upgrade of a worker deployment under load: sessions started on build A (some
mid-message on a slow tool, some idle, some parked on a held call) all move to build B,
whose workflow code has a change that replaying an A run would fail on, by continuing as
new at their next safe point; A's workers stop once visibility shows no session on A.

On the embedded dev server: the time-skipping server has no worker deployments."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager, suppress

import pytest_asyncio
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.service import RPCError
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from durable_loop.chaos.scenarios_upgrade import build_of, make_current
from durable_loop.chaos.upgrade_builds import SessionBuildA, SessionBuildB
from durable_loop.cli.devserver import start_local_environment
from durable_loop.client.history import fetch_histories
from durable_loop.client.sessions import SessionClient
from durable_loop.core import names
from durable_loop.core.registry import ToolContext, ToolRegistry
from durable_loop.store import StoreConfig, open_store
from durable_loop.testing import ScriptedLLM, reply
from durable_loop.testing.history import replay_failures
from durable_loop.worker.builder import WorkerDeps, build_worker, new_http_client
from durable_loop.worker.deployments import describe_deployment, running_workflows
from tests.conftest import settings_for, unique

SLOW_TOOL_S = 3.0


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def temporal_env() -> AsyncIterator[WorkflowEnvironment]:
    env = await start_local_environment()
    try:
        yield env
    finally:
        await env.shutdown()


class Ledger:
    """Every tool execution, by idempotency key."""

    def __init__(self) -> None:
        self.runs: list[tuple[str, str]] = []

    def registry(self) -> ToolRegistry:
        registry = ToolRegistry()

        @registry.tool()
        async def crunch(what: str, ctx: ToolContext) -> str:
            """Crunch numbers (slowly)."""
            self.runs.append(("crunch", ctx.idempotency_key))
            await asyncio.sleep(SLOW_TOOL_S)
            return f"crunched {what}"

        @registry.tool(requires_approval=True)
        def pay(amount: int, ctx: ToolContext) -> str:
            """Pay an amount."""
            self.runs.append(("pay", ctx.idempotency_key))
            return f"paid {amount}"

        return registry


@asynccontextmanager
async def build(
    client: Client, deps: WorkerDeps, queue: str, deployment: str, build_id: str
) -> AsyncIterator[Worker]:
    workflows = [SessionBuildA if build_id == "A" else SessionBuildB]
    worker = build_worker(
        client,
        deps,
        task_queue=queue,
        deployment_name=deployment,
        build_id=build_id,
        workflows=workflows,
    )
    async with worker:
        yield worker


async def test_every_session_moves_to_the_new_build_and_the_old_one_drains(
    temporal_env: WorkflowEnvironment, scripted_llm: ScriptedLLM, store_url: str
) -> None:
    client = temporal_env.client
    deployment, queue = unique("deploy"), unique("q")
    ledger = Ledger()
    store = open_store(StoreConfig(url=store_url))
    http = new_http_client()
    deps = WorkerDeps(store=store, registry=ledger.registry(), http=http, environ={})
    sessions = SessionClient(client, task_queue=queue, search_attributes=False)
    kinds = {"busy": 2, "idle": 2, "parked": 2}
    ids = {kind: [unique(kind) for _ in range(n)] for kind, n in kinds.items()}
    all_ids = [sid for group in ids.values() for sid in group]
    scripts = {
        "busy": [reply.tool_call("crunch", {"what": "q1"}), reply.text("crunched")],
        "idle": [reply.text("hello")],
        "parked": [reply.tool_call("pay", {"amount": 5}), reply.text("paid")],
    }
    old = AsyncExitStack()
    try:
        await old.enter_async_context(build(client, deps, queue, deployment, "A"))
        await make_current(client, deployment, "A")
        for kind, sids in ids.items():
            for sid in sids:
                scripted_llm.script(sid, [*scripts[kind], reply.text(f"{kind} on B")])
                await sessions.start(sid, settings_for(scripted_llm, sid))
        held = {}
        for sid in ids["idle"]:
            assert (await sessions.send(sid, "hi")).reply == "hello"
        for sid in ids["parked"]:
            first = await sessions.send(sid, "pay 5")
            assert first.status == "awaiting_approval"
            held[sid] = (first.message_id, first.pending_approvals[0])
        busy = [asyncio.create_task(sessions.send(sid, "crunch")) for sid in ids["busy"]]
        await asyncio.sleep(SLOW_TOOL_S / 3)  # the busy ones are inside their tool call

        async with build(client, deps, queue, deployment, "B"):
            await make_current(client, deployment, "B")
            switched = time.monotonic()
            for sid, (_, call) in held.items():
                await sessions.tool_calls.signal(sid, call.decision("confirm", "alice"))
            finals = [await sessions.message_result(sid, mid) for sid, (mid, _) in held.items()]
            finals += await asyncio.gather(*busy)
            while await running_workflows(client, deployment, "A"):
                await asyncio.sleep(0.2)
            old_build_up_s = time.monotonic() - switched
            await old.aclose()
            seconds = {sid: await sessions.send(sid, "again") for sid in all_ids}
            view = await describe_deployment(client, deployment)
            done = {sid: (await sessions.status(sid)).messages_done for sid in all_ids}
        print(f"rolling upgrade: 6 sessions, build A up {old_build_up_s:.1f}s after B was current")

        assert [(f.status, f.reply) for f in finals] == [
            *[("completed", "paid")] * 2,
            *[("completed", "crunched")] * 2,
        ]
        kind_of = {sid: kind for kind, sids in ids.items() for sid in sids}
        assert {sid: r.reply for sid, r in seconds.items()} == {
            sid: f"{kind_of[sid]} on B" for sid in all_ids
        }
        assert set(done.values()) == {2}
        assert view.current_build_id == "B"
        on_each = {v.build_id: (v.running_sessions, v.running_workflows) for v in view.versions}
        assert on_each == {"A": (0, 0), "B": (6, 6)}
        for sid in all_ids:
            histories = await fetch_histories(client, names.session_workflow_id(sid))
            builds = [build_of(h) for h in histories]
            assert builds == ["A", "B"]  # one move, at the first safe point
            failed = [
                e
                for h in histories
                for e in h.events
                if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED
            ]
            assert failed == []
            on_a, on_b = histories
            assert await replay_failures([on_a], [SessionBuildA]) == {}
            assert await replay_failures([on_b], [SessionBuildB]) == {}
            assert await replay_failures([on_a], [SessionBuildB]) != {}  # B needed a patch
        keys = [key for _, key in ledger.runs]
        assert len(keys) == len(set(keys)) == 4  # 2 crunch + 2 pay, each once
    finally:
        await old.aclose()
        for sid in [s for group in ids.values() for s in group]:
            with suppress(RPCError):
                await client.get_workflow_handle(names.session_workflow_id(sid)).terminate("done")
        await http.aclose()
        await store.close()
