"""`durable-loop workspace SESSION`: the committed facts, draft, locks, version, the
decisions people made and the newest audit rows, as Rich tables or JSON, read from the
store."""

from __future__ import annotations

import asyncio

from typer.testing import CliRunner

from durable_loop.client.workspace import WorkspaceView
from durable_loop.console import app
from durable_loop.store.workspace import ChangeSource
from durable_loop.testing import reply
from durable_loop.tools.workspace import workspace_tools
from tests.cli.test_cli_errors import assert_one_line
from tests.client.kit import session_with_proposal
from tests.conftest import unique
from tests.workflows.approval_kit import Payments, approval_settings


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


async def test_who_approved_this_payment_without_json(
    loop_worker, scripted_llm, temporal_env, store_url
):
    """A session that never wrote to its workspace: the decisions on its tool calls are
    shown, as sentences with the calls' arguments, at 80 columns."""
    address = temporal_env.client.service_client.config.target_host
    payments = Payments()
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model,
        [
            reply.tool_calls(
                ("pay", {"amount": 1200, "to": "acme"}, "c1"),
                ("pay", {"amount": 90, "to": "zeta"}, "c2"),
            ),
            reply.text("Paid acme 120; zeta was not paid."),
        ],
    )
    async with loop_worker(payments.registry()) as w:
        await w.sessions.start(sid, approval_settings(scripted_llm, model, temporal_env))
        first = await w.sessions.send(sid, "pay acme and zeta", message_id=f"msg-{sid}")
        assert first.status == "awaiting_approval", first
        await w.sessions.confirm_tool_call(
            sid, "c1", "alice", arguments={"amount": 120, "to": "acme"}, comment="invoice 42"
        )
        await w.sessions.reject_tool_call(sid, "c2", "bob", comment="unknown supplier")
        final = await w.sessions.message_result(sid, first.message_id)
        common = ("workspace", sid, "--address", address, "--db-url", store_url)
        shown = await asyncio.to_thread(
            CliRunner().invoke, app, list(common), env={"COLUMNS": "80"}
        )
    assert final.status == "completed", final
    assert shown.exit_code == 0, shown.output
    out = shown.stdout
    flat = " ".join(out.split())
    assert "nothing written yet" in out and "decisions (2)" in out
    assert "alice approved with edits tool call c1 (pay, turn 1) (changed amount)" in flat
    assert 'arguments: {"amount": 1200, "to": "acme"}' in flat
    assert 'ran with: {"amount": 120, "to": "acme"}' in flat
    assert "comment: invoice 42" in flat
    assert "bob rejected tool call c2 (pay, turn 1)" in flat
    assert "comment: unknown supplier" in flat
    assert max(len(line) for line in out.splitlines()) <= 80
