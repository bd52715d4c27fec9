"""Workflow versioning by patching, against a history recorded before the change.

``histories/session_before_change.json`` was recorded by the production workflow. The
change in ``variants.py`` (catalog by activity instead of local activity) replays against
it only when guarded by ``workflow.patched``; unguarded, replay fails with a
nondeterminism error, which is what would break every session in flight on deploy.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from temporalio.client import WorkflowHistory
from temporalio.worker import Worker

from durable_loop.client.history import fetch_histories
from durable_loop.client.sessions import SessionClient
from durable_loop.core import names
from durable_loop.store import StoreConfig, open_store
from durable_loop.testing import reply
from durable_loop.testing.history import EventType, events_of, replay_failures
from durable_loop.worker.builder import WorkerDeps, activities_for, new_http_client
from durable_loop.workflows.session import SessionWorkflow
from tests.conftest import settings_for, unique
from tests.versioning.record import HISTORY, calculator
from tests.versioning.variants import (
    PATCH,
    PatchDeprecatedSession,
    PatchedSession,
    UnpatchedSession,
)


def before_change() -> WorkflowHistory:
    return WorkflowHistory.from_json("session-before-change", HISTORY.read_text())


def activity_types(history: WorkflowHistory) -> list[str]:
    return [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in events_of(history, EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
    ]


def patch_markers(history: WorkflowHistory) -> list[str]:
    markers = events_of(history, EventType.EVENT_TYPE_MARKER_RECORDED)
    found = []
    for event in markers:
        attributes = event.marker_recorded_event_attributes
        if attributes.marker_name == "core_patch":
            data = json.loads(attributes.details["patch-data"].payloads[0].data)
            found.append(data["id"])
    return found


def test_the_recorded_history_is_from_before_the_change():
    history = before_change()
    assert "list_tools" not in activity_types(history)  # loaded by a local activity
    assert "llm_turn" in activity_types(history) and "run_tool" in activity_types(history)
    assert patch_markers(history) == []
    assert history.events[-1].event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED


async def test_the_current_workflow_replays_it():
    assert await replay_failures([before_change()], [SessionWorkflow]) == {}


async def test_the_patched_change_replays_the_old_history():
    assert await replay_failures([before_change()], [PatchedSession]) == {}


async def test_the_same_change_without_the_patch_fails_replay():
    failures = await replay_failures([before_change()], [UnpatchedSession])
    [failure] = failures.values()
    assert "nondetermin" in failure.lower(), failure


async def test_new_runs_take_the_new_path_and_deprecation_keeps_them_replaying(
    temporal_env, scripted_llm, tmp_path: Path
):
    """A run started on the patched code records the patch marker and loads the catalog
    by activity; once only such runs remain, ``deprecate_patch`` replays them too (but
    would fail the runs from before the patch: deprecate only after they are gone)."""
    model, sid, queue = unique("m"), unique("s"), f"versioning-{uuid.uuid4().hex[:8]}"
    scripted_llm.script(model, [reply.tool_call("add", {"a": 2, "b": 3}), reply.text("5")])
    store = open_store(StoreConfig.sqlite_file(tmp_path / "store.db"))
    http = new_http_client()
    deps = WorkerDeps(store=store, registry=calculator(), http=http, environ={})
    worker = Worker(
        temporal_env.client,
        task_queue=queue,
        workflows=[PatchedSession],
        activities=activities_for(deps),  # type: ignore[arg-type]
    )
    sessions = SessionClient(temporal_env.client, task_queue=queue, search_attributes=False)
    try:
        async with worker:
            await sessions.start(sid, settings_for(scripted_llm, model))
            result = await sessions.send(sid, "what is 2+3?")
            await sessions.close(sid)
            await temporal_env.client.get_workflow_handle(names.session_workflow_id(sid)).result()
    finally:
        await http.aclose()
        await store.close()
    assert result.reply == "5"
    [patched_run] = await fetch_histories(temporal_env.client, names.session_workflow_id(sid))
    assert PATCH in patch_markers(patched_run)  # beside the patches the session has shipped
    assert activity_types(patched_run)[0] == "list_tools"
    assert await replay_failures([patched_run], [PatchedSession]) == {}
    assert await replay_failures([patched_run], [PatchDeprecatedSession]) == {}
    assert await replay_failures([before_change()], [PatchDeprecatedSession]) != {}
