"""A rolling upgrade under load: sessions on build A of a worker deployment (a third mid
message on a slow transfer, a third idle, a third parked on a held transfer) while build B,
whose workflow code would fail to replay A's runs, becomes current. Every session moves to
B by continuing as new at its next safe point; A's workers stop once visibility shows no
session left on A, and the scenario reports how long that took."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager, suppress

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHistory
from temporalio.service import RPCError

from durable_loop.chaos.rig import ChaosRig, eventually
from durable_loop.chaos.scenario import Tracker, scenario
from durable_loop.chaos.scenarios_approvals import APPROVER, gated
from durable_loop.chaos.tools import registry_for
from durable_loop.chaos.upgrade_builds import SessionBuildA, SessionBuildB
from durable_loop.client.history import fetch_histories
from durable_loop.client.sessions import SessionClient
from durable_loop.core import names
from durable_loop.core.contracts import RunResult
from durable_loop.store import StoreConfig, open_store
from durable_loop.testing import reply
from durable_loop.worker.builder import WorkerDeps, build_worker, new_http_client
from durable_loop.worker.deployments import (
    describe_deployment,
    running_workflows,
    set_current_version,
)

BUILDS: dict[str, type] = {"A": SessionBuildA, "B": SessionBuildB}
TRANSFER_HOLD_S = 1.5
"""The busy sessions' transfer holds its worker this long: B becomes current meanwhile."""
DRAIN_TIMEOUT_S = 180.0


def build_of(history: WorkflowHistory) -> str:
    """The build id the run's workflow tasks completed on ("" when unversioned)."""
    builds = {
        e.workflow_task_completed_event_attributes.deployment_version.build_id
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
    }
    return ",".join(sorted(builds))


def workflows_of_build(history: WorkflowHistory) -> Sequence[type]:
    return [BUILDS.get(build_of(history), SessionBuildA)]


def failed_tasks(histories: list[WorkflowHistory]) -> int:
    failed = EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED
    return sum(1 for h in histories for e in h.events if e.event_type == failed)


async def make_current(client: Client, deployment: str, build_id: str) -> None:
    """Once the build's workers poll every task queue the current build does: the server
    knows a version by its pollers, and refuses to switch while a queue has none."""

    async def switched() -> bool:
        with suppress(RPCError):
            view = await describe_deployment(client, deployment)
            if any(v.build_id == build_id for v in view.versions):
                await set_current_version(client, deployment, build_id)
                return True
        return False

    await eventually(switched, 30)


@asynccontextmanager
async def build_workers(
    rig: ChaosRig, task_queue: str, deployment: str, build_id: str
) -> AsyncIterator[None]:
    """A worker of one build, in this process (its workflow code is not the package's)."""
    store = open_store(StoreConfig(url=rig.db_url))
    http = new_http_client()
    deps = WorkerDeps(store=store, registry=registry_for(rig.db_url), http=http, environ={})
    worker = build_worker(
        rig.client,
        deps,
        task_queue=task_queue,
        deployment_name=deployment,
        build_id=build_id,
        workflows=[BUILDS[build_id]],
    )
    try:
        async with worker:
            yield
    finally:
        await http.aclose()
        await store.close()


@scenario(
    "rolling_upgrade",
    "build B becomes current while sessions run, idle and wait on held calls on build A; "
    "every session moves to B, A drains",
)
async def rolling_upgrade(rig: ChaosRig, t: Tracker) -> None:
    t.workflows_for = workflows_of_build
    count = max(3, rig.load_sessions)
    task_queue, deployment = f"upgrade-{uuid.uuid4().hex[:8]}", f"chaos-{uuid.uuid4().hex[:8]}"
    sessions = SessionClient(rig.client, task_queue=task_queue, search_attributes=False)
    kinds = ("busy", "idle", "parked")
    by_kind: dict[str, list[str]] = {kind: [] for kind in kinds}
    models: dict[str, str] = {}
    for index in range(count):
        kind = kinds[index % 3]
        sid, model = rig.new_session(f"upgrade-{kind}")
        by_kind[kind].append(t.session(sid))
        models[sid] = model
        first = (
            [reply.text("hello")]
            if kind == "idle"
            else [
                reply.tool_call("transfer", {"amount": index + 1, "hold_s": TRANSFER_HOLD_S}),
                reply.text(f"paid {index + 1}"),
            ]
        )
        rig.llm.script(model, [*first, reply.text(f"{kind} on B")])
    settings = {
        sid: gated(rig.settings(models[sid])) if kind == "parked" else rig.settings(models[sid])
        for kind, sids in by_kind.items()
        for sid in sids
    }
    old = AsyncExitStack()
    try:
        async with AsyncExitStack() as new:
            await old.enter_async_context(build_workers(rig, task_queue, deployment, "A"))
            await make_current(rig.client, deployment, "A")
            firsts: dict[str, RunResult] = {}

            async def send_first(sid: str) -> None:
                firsts[sid] = await sessions.start_and_send(
                    sid, settings[sid], "go", message_id="m1"
                )

            await asyncio.gather(*(send_first(sid) for sid in by_kind["idle"] + by_kind["parked"]))
            busy = {
                sid: asyncio.create_task(
                    sessions.start_and_send(sid, settings[sid], "go", message_id="m1")
                )
                for sid in by_kind["busy"]
            }

            async def transfers_running() -> bool:
                counts = await asyncio.to_thread(rig.ledger.counts, by_kind["busy"])
                return counts.invocations >= len(by_kind["busy"])

            await eventually(transfers_running, 120)
            await new.enter_async_context(build_workers(rig, task_queue, deployment, "B"))
            await make_current(rig.client, deployment, "B")
            switched = time.monotonic()
            t.fault("build B made current mid-load")
            for sid in by_kind["parked"]:
                held = firsts[sid].pending_approvals
                t.expect(len(held) == 1, f"{sid}: {len(held)} held calls on build A")
                for call in held:
                    await sessions.tool_calls.signal(sid, call.decision("confirm", APPROVER))
            decided = await asyncio.gather(
                *(sessions.message_result(sid, firsts[sid].message_id) for sid in by_kind["parked"])
            )
            finished = dict(zip(by_kind["parked"], decided, strict=True))
            finished.update({sid: await task for sid, task in busy.items()})
            finished.update({sid: firsts[sid] for sid in by_kind["idle"]})

            async def drained() -> bool:
                return await running_workflows(rig.client, deployment, "A") == 0

            await eventually(drained, DRAIN_TIMEOUT_S)
            old_build_up_s = time.monotonic() - switched
            await old.aclose()
            t.fault("build A's workers stopped once drained")
            seconds = await asyncio.gather(
                *(sessions.send(sid, "again", message_id="m2") for sid in t.result.sessions)
            )
    finally:
        await old.aclose()  # stopped once drained, unless the scenario failed first
    kind_of = {sid: kind for kind, sids in by_kind.items() for sid in sids}
    histories = {
        sid: await fetch_histories(rig.client, names.session_workflow_id(sid))
        for sid in t.result.sessions
    }
    for sid, second in zip(t.result.sessions, seconds, strict=True):
        builds = [build_of(h) for h in histories[sid]]
        t.expect(builds[0] == "A" and builds[-1] == "B", f"{sid}: runs on builds {builds}")
        t.expect(
            finished[sid].status == "completed", f"{sid}: first message {finished[sid].status}"
        )
        t.ended(sid, second, reply=f"{kind_of[sid]} on B")
    nondeterminism = sum(failed_tasks(h) for h in histories.values())
    t.expect(nondeterminism == 0, f"{nondeterminism} workflow tasks failed")
    effects = await asyncio.to_thread(rig.ledger.counts, t.result.sessions)
    paying = len(by_kind["busy"]) + len(by_kind["parked"])
    t.expect(effects.effects == paying, f"{effects.effects} transfers for {paying} calls")
    lost = sum(1 for r in [*finished.values(), *seconds] if r.status != "completed")
    t.result.details.update(
        sessions=count,
        busy=len(by_kind["busy"]),
        idle=len(by_kind["idle"]),
        parked=len(by_kind["parked"]),
        messages=2 * count,
        lost_messages=lost,
        decisions=len(by_kind["parked"]),
        failed_workflow_tasks=nondeterminism,
        old_build_up_s=round(old_build_up_s, 1),
    )
