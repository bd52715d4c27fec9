"""`durable-loop workspace SESSION`: the committed facts, draft, locks, version and the
newest audit rows, as Rich tables or JSON, read from the store."""

from __future__ import annotations

import asyncio

from typer.testing import CliRunner

from durable_loop.client.workspace import WorkspaceView
from durable_loop.console import app
from durable_loop.store.workspace import ChangeSource
from durable_loop.tools.workspace import workspace_tools
from tests.cli.test_cli_errors import assert_one_line
from tests.client.kit import session_with_proposal
from tests.conftest import unique


async def invoke(*args: str):
    return await asyncio.to_thread(CliRunner().invoke, app, list(args), env={"COLUMNS": "200"})


async def test_workspace_shows_facts_locks_and_audit(
    loop_worker, scripted_llm, temporal_env, store_url, ws, tmp_path
):
    address = temporal_env.client.service_client.config.target_host
    async with loop_worker(workspace_tools(ws)) as w:
        _, sid, pending = await session_with_proposal(w, ws, scripted_llm, temporal_env)
        await w.sessions.confirm(sid, pending.proposal_id, "alice", comment="ship it")
        await ws.set_lock(sid, "/title", ChangeSource(actor="alice", actor_kind="human"))
        common = ("workspace", sid, "--address", address, "--db-url", store_url)
        as_json = await invoke(*common, "--json")
        table = await invoke(*common, "--audit", "3")
        by_id = await invoke(
            "workspace", sid, "--workspace-id", sid, "--db-url", store_url, "--json"
        )
        unknown = await invoke("workspace", unique("nope"), "--address", address)
        no_store = await invoke(*common[:4], "--db-url", f"sqlite:///{tmp_path / 'missing.db'}")

    assert as_json.exit_code == 0, as_json.output
    view = WorkspaceView.model_validate_json(as_json.stdout)
    assert view.facts == {"title": "New title", "tags": ["draft", "reviewed"]}
    assert view.locks == ["/title"] and view.facts_version == 1 and view.version == 3
    assert [(a.target, a.op, a.actor) for a in view.audit[-2:]] == [
        ("proposal", "confirm", "alice"),
        ("locks", "lock", "alice"),
    ]
    assert WorkspaceView.model_validate_json(by_id.stdout) == view

    assert table.exit_code == 0, table.output
    out = table.stdout
    assert f"workspace {sid} of session {sid} · version 3 · facts version 1" in out
    assert '"New title"' in out and "locked" in out and "locks: /title" in out
    assert "draft: empty" in out and "audit (newest 3)" in out
    assert "ship it" in out and pending.proposal_id in out
    assert_one_line(unknown, "SESSION_NOT_FOUND")
    assert_one_line(no_store, "STORE_NOT_FOUND", "missing.db")
