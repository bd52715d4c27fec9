"""What the model cannot do with the workspace, and what a crash cannot do twice."""

from __future__ import annotations

import asyncio
import uuid

import pytest_asyncio

from durable_loop.client.proposals import ProposalClient as ApprovalClient
from durable_loop.client.sessions import SessionClient
from durable_loop.core import names
from durable_loop.core.config import RuntimeConfig
from durable_loop.store import StoreConfig, open_store
from durable_loop.store.workspace import WorkspaceStore, open_workspace_store
from durable_loop.testing import reply
from durable_loop.tools.workspace import workspace_tools
from durable_loop.worker.builder import WorkerDeps, WorkerTuning, build_worker, new_http_client
from tests.conftest import unique
from tests.workflows.proposal_kit import (
    activity_names,
    decided,
    first_pending,
    session_settings,
    tool_envelopes,
)


@pytest_asyncio.fixture
async def ws(store_url):
    store = open_workspace_store(StoreConfig(url=store_url))
    yield store
    await store.close()


async def run_turn(w, scripted_llm, env, sid, steps, runtime=None):
    model = unique("m")
    scripted_llm.script(model, steps)
    await w.sessions.start(sid, session_settings(scripted_llm, model, env, runtime=runtime))
    result = await w.sessions.send(sid, "go")
    return result, scripted_llm.requests(model)


async def test_model_cannot_reach_facts_commit_or_masked_tools(
    loop_worker, scripted_llm, temporal_env, ws
):
    sid = unique("s")
    await ws.create(sid, facts={"title": "Old"}, draft={"n": 1})
    commit_args = {"proposal_id": "p-anything", "changes": [{"op": "remove", "path": "/title"}]}
    patch_args = {"ops": [{"op": "replace", "path": "/n", "value": 2}]}
    async with loop_worker(workspace_tools(ws)) as w:
        result, requests = await run_turn(
            w,
            scripted_llm,
            temporal_env,
            sid,
            [
                reply.tool_calls(("facts_commit", commit_args), ("state_patch", patch_args)),
                reply.text("I cannot."),
            ],
            runtime=RuntimeConfig(tool_denylist=["state_patch"]),
        )
        histories = await w.histories(sid)
    assert "facts_commit" not in requests[0].tool_names
    assert "state_patch" not in requests[0].tool_names
    assert set(requests[0].tool_names) == {"state_get", "facts_propose"}
    assert [(t.name, t.executed, t.error_codes) for t in result.tool_calls] == [
        ("facts_commit", False, ["TOOL_NOT_FOUND"]),
        ("state_patch", False, ["TOOL_NOT_ALLOWED"]),
    ]
    assert [e["errors"][0]["code"] for e in tool_envelopes(requests[1])] == [
        "TOOL_NOT_FOUND",
        "TOOL_NOT_ALLOWED",
    ]
    scheduled = activity_names(histories)
    assert "run_tool" not in scheduled and "facts_commit" not in scheduled
    snap = await ws.snapshot(sid)
    assert (snap.facts, snap.draft, snap.version) == ({"title": "Old"}, {"n": 1}, 1)
    assert [a.op for a in await ws.audit(sid)] == ["create"]


async def test_locks_block_state_patch_and_facts_propose(
    loop_worker, scripted_llm, temporal_env, ws
):
    sid = unique("s")
    await ws.create(
        sid, facts={"name": "Ada", "age": 36}, draft={"name": "Ada", "note": ""}, locks=["/name"]
    )
    patch = {
        "ops": [{"op": "replace", "path": "/note", "value": "x"}, {"op": "remove", "path": "/name"}]
    }
    propose = {"changes": [{"op": "replace", "path": "/name", "value": "Bob"}]}
    async with loop_worker(workspace_tools(ws)) as w:
        result, requests = await run_turn(
            w,
            scripted_llm,
            temporal_env,
            sid,
            [
                reply.tool_calls(("state_patch", patch), ("facts_propose", propose)),
                reply.text("Both are locked."),
            ],
        )
        listing = await ApprovalClient(w.sessions.client).proposals(sid)
    assert [(t.name, t.executed, t.error_codes) for t in result.tool_calls] == [
        ("state_patch", True, ["LOCKED"]),
        ("facts_propose", True, ["LOCKED"]),
    ]
    for envelope in tool_envelopes(requests[1]):
        assert envelope["ok"] is False and "/name is locked" in envelope["errors"][0]["message"]
    assert listing.pending == []
    snap = await ws.snapshot(sid)
    assert snap.draft == {"name": "Ada", "note": ""} and snap.facts == {"name": "Ada", "age": 36}


async def test_bad_input_gets_coded_envelopes_and_changes_nothing(
    loop_worker, scripted_llm, temporal_env, ws
):
    sid = unique("s")
    await ws.create(sid, facts={"title": "t"}, draft={"title": "t", "n": 5, "tags": ["a"]})
    ok_first = {"op": "replace", "path": "/title", "value": "half"}
    calls = [
        ("state_patch", {"ops": [ok_first, {"op": "jump", "path": "/n"}]}),
        ("state_patch", {"ops": [ok_first, {"path": "/n"}]}),
        ("state_patch", '{"ops": [{"op": "add", "path": "/x", "value": NaN}]}'),
        ("state_patch", {"ops": [ok_first, {"op": "add", "path": "/n/deeper", "value": 1}]}),
        ("state_patch", {"ops": [ok_first, {"op": "add", "path": "/tags/7", "value": 1}]}),
        ("state_patch", {"ops": [{"op": "add", "path": "/blob", "value": "x" * 70_000}]}),
        (
            "facts_propose",
            {"changes": [{"op": "add", "path": f"/k{i}", "value": i} for i in range(101)]},
        ),
        ("facts_propose", {"changes": [{"op": "remove", "path": "/missing"}]}),
        ("state_get", {"workspace_id": "someone-else"}),
        ("state_get", {"target": "draft", "path": "/nope"}),
    ]
    async with loop_worker(workspace_tools(ws)) as w:
        result, requests = await run_turn(
            w, scripted_llm, temporal_env, sid, [reply.tool_calls(*calls), reply.text("Sorry.")]
        )
        listing = await ApprovalClient(w.sessions.client).proposals(sid)
    codes = [t.error_codes for t in result.tool_calls]
    assert codes == [
        ["INVALID_ARGS"],
        ["INVALID_ARGS"],
        ["INVALID_JSON"],
        ["INVALID_ARGS"],
        ["INVALID_ARGS"],
        ["ARGUMENTS_TOO_LARGE"],
        ["ARGUMENTS_TOO_LARGE"],
        ["INVALID_ARGS"],
        ["INVALID_ARGS"],
        ["INVALID_ARGS"],
    ]
    messages = [e["errors"][0]["message"] for e in tool_envelopes(requests[1])]
    assert result.tool_calls[2].executed is False
    assert "non-container" in messages[3] or "does not support indexing" in messages[3]
    assert "implicit" in messages[8] and "someone-else" in messages[8]
    snap = await ws.snapshot(sid)
    assert snap.draft == {"title": "t", "n": 5, "tags": ["a"]} and snap.version == 1
    assert listing.pending == []


async def test_workspace_tools_work_with_the_implicit_workspace(
    loop_worker, scripted_llm, temporal_env, ws
):
    sid = unique("s")
    await ws.create(sid, facts={"title": "t"}, draft={"items": []})
    calls = [
        ("state_patch", {"ops": [{"op": "add", "path": "/items/-", "value": 1}]}, "c1"),
        (
            "state_patch",
            {"ops": [{"op": "add", "path": "/items/-", "value": 2}], "workspace_id": sid},
            "c2",
        ),
    ]
    async with loop_worker(workspace_tools(ws)) as w:
        result, requests = await run_turn(
            w,
            scripted_llm,
            temporal_env,
            sid,
            [
                reply.tool_calls(*calls),
                reply.tool_call("state_get", {"target": "draft", "path": "/items"}),
                reply.text("Two items."),
            ],
            runtime=RuntimeConfig(parallel_tool_calls=False, max_tool_calls_per_turn=2),
        )
    assert result.status == "completed" and all(t.ok for t in result.tool_calls)
    got = tool_envelopes(requests[2])[-1]["data"]
    assert got["draft"] == [1, 2] and got["version"] == 3 and got["workspace_id"] == sid
    assert [a.turn for a in await ws.audit(sid) if a.target == "draft"] == [1, 1]


async def test_blank_or_ignored_workspace_ids_reach_the_session_workspace_only(
    loop_worker, scripted_llm, temporal_env, ws
):
    """A blank id counts as left out; another workspace's id is refused, unless
    ignore_implicit_arguments drops it (with a warning) and the session's own is used."""
    sid, other = unique("s"), unique("other")
    await ws.create(sid, draft={"n": 0})
    await ws.create(other, draft={"n": 0})
    calls = [
        ("state_patch", {"ops": [{"op": "replace", "path": "/n", "value": 1}], "workspace_id": ""}),
        (
            "state_patch",
            {"ops": [{"op": "replace", "path": "/n", "value": 2}], "workspace_id": other},
        ),
    ]
    steps = [reply.tool_calls(*calls), reply.text("ok")]
    two_calls = {"parallel_tool_calls": False, "max_tool_calls_per_turn": 2}
    async with loop_worker(workspace_tools(ws)) as w:
        strict, _ = await run_turn(
            w, scripted_llm, temporal_env, sid, steps, runtime=RuntimeConfig(**two_calls)
        )
        lenient_sid = unique("s")
        await ws.create(lenient_sid, draft={"n": 0})
        lenient, requests = await run_turn(
            w,
            scripted_llm,
            temporal_env,
            lenient_sid,
            steps,
            runtime=RuntimeConfig(**two_calls, ignore_implicit_arguments=True),
        )
    assert [(t.ok, t.error_codes) for t in strict.tool_calls] == [
        (True, []),
        (False, ["INVALID_ARGS"]),
    ]
    assert (await ws.snapshot(sid)).draft == {"n": 1}
    assert [t.ok for t in lenient.tool_calls] == [True, True]
    assert (await ws.snapshot(lenient_sid)).draft == {"n": 2}
    assert (await ws.snapshot(other)).draft == {"n": 0}
    warnings = [e["warnings"] for e in tool_envelopes(requests[1])]
    assert warnings[1] == [
        "workspace_id: filled in by the runtime; the value you passed was ignored"
    ]


async def test_worker_killed_after_commit_write_does_not_commit_twice(
    loop_worker, scripted_llm, temporal_env, ws, store_url
):
    model, sid, queue = unique("m"), unique("s"), f"crash-{uuid.uuid4().hex[:10]}"
    await ws.create(sid, facts={"title": "Old"})
    scripted_llm.script(
        model,
        [
            reply.tool_call(
                "facts_propose", {"changes": [{"op": "replace", "path": "/title", "value": "New"}]}
            ),
            reply.text("Proposed."),
        ],
    )
    written = asyncio.Event()

    async def die_after_write(_out) -> None:
        written.set()
        await asyncio.Event().wait()  # the reply never leaves this worker

    crashing = WorkspaceStore(ws.db, on_settled=die_after_write)
    transcript = open_store(StoreConfig(url=store_url))
    http = new_http_client()
    deps = WorkerDeps(
        store=transcript, registry=workspace_tools(ws), http=http, environ={}, workspace=crashing
    )
    sessions = SessionClient(temporal_env.client, task_queue=queue)
    approvals = ApprovalClient(temporal_env.client)
    try:
        # No sticky cache: the next workflow task must reach the replacement worker.
        tuning = WorkerTuning(max_cached_workflows=0)
        async with build_worker(temporal_env.client, deps, task_queue=queue, tuning=tuning):
            await sessions.start(sid, session_settings(scripted_llm, model, temporal_env))
            await sessions.send(sid, "rename")
            pending = await first_pending(approvals, sid)
            await approvals.signal(
                sid, await approvals.decision_for(sid, pending.proposal_id, "confirm", "alice")
            )
            await asyncio.wait_for(written.wait(), 20)
            assert (await ws.snapshot(sid)).facts == {"title": "New"}
    finally:
        await http.aclose()
        await transcript.close()
    async with loop_worker(workspace_tools(ws), task_queue=queue) as w:
        w.sessions.started_workflow_ids.add(names.session_workflow_id(sid))
        result = await decided(approvals, sid, pending.proposal_id)
        histories = await w.histories(sid)
    assert result.status == "committed" and result.facts_version == 1
    snap = await ws.snapshot(sid)
    assert snap.facts == {"title": "New"} and snap.facts_version == 1
    assert len([a for a in await ws.audit(sid) if a.target == "facts"]) == 1
    events = [e for h in histories for e in h.events]
    commit_ids = [
        e.event_id
        for e in events
        if e.activity_task_scheduled_event_attributes.activity_type.name == "facts_commit"
    ]
    attempts = [
        e.activity_task_started_event_attributes.attempt
        for e in events
        if e.activity_task_started_event_attributes.scheduled_event_id in commit_ids
    ]
    assert len(commit_ids) == 1 and attempts and attempts[0] >= 2
