"""examples/child_session: the user's own workflow runs durable-loop sessions as child
workflows, on a worker that gets durable-loop through ``DurableLoopPlugin`` only. Its
histories (parent and both children) replay with ``Replayer`` and the same plugin."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest_asyncio
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHistory
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Replayer, Worker

from durable_loop import (
    DurableLoopPlugin,
    LlmEndpoint,
    RetrySettings,
    StoreConfig,
    WorkerDeps,
    open_store,
)
from durable_loop.store.transcript import TranscriptStore
from durable_loop.testing import ScriptedLLM, reply
from durable_loop.worker.deps import new_http_client
from examples.child_session.models import TriageRequest
from examples.child_session.tools import registry
from examples.child_session.workflow import TicketTriage
from tests.conftest import unique


@pytest_asyncio.fixture
async def store(tmp_path: Path) -> AsyncIterator[TranscriptStore]:
    opened = open_store(StoreConfig.sqlite_file(tmp_path / "store.db"))
    yield opened
    await opened.close()


def plugged_client(env: WorkflowEnvironment, plugin: DurableLoopPlugin) -> Client:
    """What ``Client.connect(..., plugins=[plugin])`` gives, on the test server's
    connection (keeping its time-skipping interceptor)."""
    config = env.client.config()
    config["plugins"] = [plugin]
    return Client(**config)


async def histories(client: Client, workflow_id: str) -> list[WorkflowHistory]:
    """The parent's history and those of every child it started."""
    parent = await client.get_workflow_handle(workflow_id).fetch_history()
    found = [parent]
    for event in parent.events:
        if event.event_type == EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED:
            child = event.child_workflow_execution_started_event_attributes.workflow_execution
            handle = client.get_workflow_handle(child.workflow_id, run_id=child.run_id)
            found.append(await handle.fetch_history(rpc_timeout=timedelta(seconds=30)))
    return found


async def each(runs: list[WorkflowHistory]) -> AsyncIterator[WorkflowHistory]:
    for run in runs:
        yield run


async def test_ticket_triage_runs_sessions_as_children_and_replays(
    temporal_env: WorkflowEnvironment, scripted_llm: ScriptedLLM, store: TranscriptStore
):
    model = unique("triage")
    scripted_llm.script(
        model,
        [
            reply.tool_call("customer_plan", {"customer": "acme"}),
            reply.text("Urgent."),
            reply.text("We are sorry about the outage. Our team is on it now."),
        ],
    )
    http = new_http_client()
    deps = WorkerDeps(store=store, registry=registry, http=http, environ={})
    client = plugged_client(temporal_env, DurableLoopPlugin(deps))
    queue = f"test-{uuid.uuid4().hex[:12]}"
    ticket = unique("t")
    request = TriageRequest(
        ticket_id=ticket,
        customer="acme",
        text="Our whole site is down!",
        llm=LlmEndpoint(
            model=model,
            base_url=scripted_llm.base_url,
            timeout_s=10,
            retry=RetrySettings(initial_interval_s=0.1, maximum_attempts=3),
        ),
    )
    try:
        # The user's worker names only the user's workflow: the plugin (handed on by the
        # client) adds durable-loop's workflows and activities.
        async with Worker(client, task_queue=queue, workflows=[TicketTriage]):
            outcome = await client.execute_workflow(
                TicketTriage.run, request, id=f"triage-{ticket}", task_queue=queue
            )
        runs = await histories(client, f"triage-{ticket}")
    finally:
        await http.aclose()

    assert outcome.priority == "urgent"
    assert outcome.customer_reply.startswith("We are sorry")
    assert outcome.tools_called == ["customer_plan"]
    assert outcome.turns == 3

    # The second child went on with the first one's conversation (from the store).
    requests = scripted_llm.requests(model)
    assert len(requests) == 3
    contents = [str(m.get("content")) for m in requests[2].messages]
    assert any("Our whole site is down!" in c for c in contents)
    assert "Urgent." in contents
    assert contents[-1] == "Draft a two-sentence reply to the customer."
    stored = await store.read(f"ticket-{ticket}")
    assert [m.seq for m in stored] == list(range(len(stored)))

    # Parent and both children (same session id, two runs) replay with the plugin.
    assert len(runs) == 3
    assert {r.workflow_id for r in runs} == {f"triage-{ticket}", f"session-ticket-{ticket}"}
    replayer = Replayer(workflows=[TicketTriage], plugins=[DurableLoopPlugin()])
    async with replayer.workflow_replay_iterator(each(runs)) as replayed:
        failures = [r.replay_failure async for r in replayed]
    assert failures == [None, None, None]
