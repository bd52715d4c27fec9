"""`durable-loop proposals | approve | reject` against a running session (proposals; held
tool calls are in test_cli_tool_calls.py and test_cli_people.py)."""

from __future__ import annotations

import asyncio
import json

import pytest_asyncio
from typer.testing import CliRunner

from durable_loop.console import app
from durable_loop.store import StoreConfig
from durable_loop.store.workspace import ChangeSource, open_workspace_store
from durable_loop.testing import reply
from durable_loop.tools.workspace import workspace_tools
from tests.client.kit import session_with_proposal
from tests.conftest import settings_for, unique


@pytest_asyncio.fixture
async def ws(store_url):
    store = open_workspace_store(StoreConfig(url=store_url))
    yield store
    await store.close()


async def invoke(env, *args: str):
    address = env.client.service_client.config.target_host
    argv = [*args, "--address", address]
    return await asyncio.to_thread(CliRunner().invoke, app, argv, env={"COLUMNS": "200"})


def propose(path: str, value: str):
    return reply.tool_call(
        "facts_propose", {"changes": [{"op": "add", "path": path, "value": value}]}
    )


async def test_list_approve_and_reject_from_the_command_line(
    loop_worker, scripted_llm, temporal_env, ws
):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model,
        [propose("/title", "T"), reply.text("one"), propose("/owner", "ops"), reply.text("two")],
    )
    async with loop_worker(workspace_tools(ws)) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        await w.sessions.send(sid, "title")
        await w.sessions.send(sid, "owner")
        listed = await invoke(temporal_env, "proposals", sid, "--json")
        pending = json.loads(listed.stdout)["pending"]
        by_path = {p["paths"][0]: p["proposal_id"] for p in pending}
        text = await invoke(temporal_env, "proposals", sid)
        approved = await invoke(
            temporal_env, "approve", sid, by_path["/title"], "--as", "alice", "--comment", "ok"
        )
        rejected = await invoke(temporal_env, "reject", sid, by_path["/owner"], "--as", "bob")
        again = await invoke(temporal_env, "approve", sid, by_path["/title"], "--as", "alice")
        unknown = await invoke(temporal_env, "reject", sid, "p-nope", "--as", "bob")
        forged = await invoke(
            temporal_env, "approve", sid, by_path["/owner"], "--as", "eve", "--fingerprint", "x"
        )
    assert listed.exit_code == 0 and len(pending) == 2
    assert by_path["/title"] in text.stdout and "add /title" in text.stdout
    assert approved.exit_code == 0, approved.output
    assert f"{by_path['/title']} committed by alice (facts version 1)" in approved.stdout
    assert rejected.exit_code == 0 and "rejected by bob" in rejected.stdout
    assert again.exit_code == 2 and "ALREADY_DECIDED" in again.output
    assert unknown.exit_code == 2 and "NOT_PENDING" in unknown.output
    assert "waiting now: " not in unknown.output and "nothing waits" in unknown.output
    assert forged.exit_code == 2 and "ALREADY_DECIDED" in forged.output
    snap = await ws.snapshot(sid)
    assert snap.facts == {"title": "T"}


async def test_approve_with_a_stale_fingerprint_is_refused(
    loop_worker, scripted_llm, temporal_env, ws
):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [propose("/title", "T"), reply.text("one")])
    async with loop_worker(workspace_tools(ws)) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        await w.sessions.send(sid, "title")
        pending = json.loads((await invoke(temporal_env, "proposals", sid, "--json")).stdout)
        proposal_id = pending["pending"][0]["proposal_id"]
        refused = await invoke(
            temporal_env, "approve", sid, proposal_id, "--as", "eve", "--fingerprint", "0" * 64
        )
        missing = await invoke(temporal_env, "proposals", unique("nosession"))
    assert refused.exit_code == 2 and "FINGERPRINT_MISMATCH" in refused.output
    assert missing.exit_code == 2 and "SESSION_NOT_FOUND" in missing.output
    assert (await ws.snapshot(sid)).facts == {}


def test_approve_is_the_command_and_confirm_its_hidden_alias() -> None:
    from durable_loop.cli.app import ENTRIES

    assert ENTRIES["confirm"].target == ENTRIES["approve"].target
    assert ENTRIES["confirm"].hidden and not ENTRIES["approve"].hidden
    listing = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "80"}).output
    assert " approve " in listing and " confirm " not in listing


async def test_a_conflict_reads_as_not_committed_and_why(
    loop_worker, scripted_llm, temporal_env, ws
):
    """Not ``p1 conflict by alice`` nor ``is already conflict``: what happened, in words."""
    async with loop_worker(workspace_tools(ws)) as w:
        _, sid, pending = await session_with_proposal(w, ws, scripted_llm, temporal_env)
        edit = [{"op": "replace", "path": "/title", "value": "Edited by hand"}]
        await ws.apply(sid, "facts", edit, ChangeSource(actor="dana", actor_kind="human"))
        pid = pending.proposal_id
        approved = await invoke(temporal_env, "approve", sid, pid, "--as", "alice")
        again = await invoke(temporal_env, "approve", sid, pid, "--as", "alice")
        bound = await invoke(
            temporal_env, "approve", sid, pid, "--as", "alice", "--fingerprint", pending.fingerprint
        )
        listed = await invoke(temporal_env, "proposals", sid)
    why = "the facts changed after it was proposed (conflict)"
    assert approved.exit_code == 1
    assert f"{pid} not committed: approved by alice, but {why}" in approved.stdout
    assert again.exit_code == 2 and "ALREADY_DECIDED" in again.stderr
    assert f"proposal {pid} was already decided: approved, but not committed: {why}" in again.stderr
    assert bound.exit_code == 2 and "decided: approved, but not committed" in bound.stderr
    assert f"{pid} not committed: approved by alice" in " ".join(listed.stdout.split())
    for result in (approved, again, bound, listed):
        assert "conflict by" not in result.output and "is already conflict" not in result.output
        assert "is conflict" not in result.output
