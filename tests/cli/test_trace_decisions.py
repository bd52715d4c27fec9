"""`durable-loop trace` on a session where people decided held calls (by Update and by
Signal, one Signal refused) and raised the budget: the table and --json answer, with
each of those as an entry of its kind; --full prints replies whole."""

from __future__ import annotations

import asyncio

from typer.testing import CliRunner

from durable_loop.client.trace.models import Trace
from durable_loop.console import app
from durable_loop.testing import reply
from tests.client.trace.kit import decided_session
from tests.conftest import settings_for, unique
from tests.workflows.approval_kit import Payments

LONG = "word " * 100


async def invoke(*args: str, columns: int = 200):
    env = {"COLUMNS": str(columns)}
    return await asyncio.to_thread(CliRunner().invoke, app, list(args), env=env)


async def test_trace_shows_decisions_and_budget_changes(
    loop_worker, scripted_llm, temporal_env, store_url
):
    address = temporal_env.client.service_client.config.target_host
    async with loop_worker(Payments().registry()) as w:
        session = await decided_session(w, scripted_llm, temporal_env)
        common = ("trace", session.session_id, "--address", address, "--db-url", store_url)
        table = await invoke(*common, columns=80)
        as_json = await invoke(*common, "--json")
        history_only = await invoke(*common, "--no-store")

    assert table.exit_code == 0, table.output
    assert as_json.exit_code == 0, as_json.output
    assert history_only.exit_code == 0, history_only.output
    print(table.stdout)
    trace = Trace.model_validate_json(as_json.stdout)
    assert [e.kind for e in trace.entries] == [
        "tool_call_decision",
        "refusal",
        "tool_call_decision",
        "tool_call_decision",
        "budget_change",
    ]
    assert [m.status for m in trace.by_message] == [r.status for r in session.results]
    assert [m.message_id for m in trace.by_message] == [r.message_id for r in session.results]
    assert trace.usage.total_tokens == sum(r.usage.total_tokens for r in session.results)
    flat = " ".join(table.stdout.split())
    assert "alice approved pay c1 with edits (amount)" in flat
    assert "refused mallory's decision on c2: FINGERPRINT_MISMATCH" in flat
    assert 'bob rejected pay c2 — "twice is too much"' in flat
    assert "carol approved pay c3" in flat
    assert "ops changed the budget: turns per message 12 → 4" in flat
    assert "reply: Noted." in flat
    assert all(len(line) <= 80 for line in table.stdout.splitlines())
    assert "transcript store not read" in history_only.stdout
    assert "bob rejected pay c2" in " ".join(history_only.stdout.split())


async def test_trace_full_prints_each_reply_whole(
    loop_worker, scripted_llm, temporal_env, store_url
):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.text(LONG)])
    address = temporal_env.client.service_client.config.target_host
    async with loop_worker() as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        await w.sessions.send(sid, "talk")
        common = ("trace", sid, "--address", address, "--db-url", store_url)
        bounded = await invoke(*common)
        whole = await invoke(*common, "--full")
        whole_json = await invoke(*common, "--full", "--json")
    assert bounded.exit_code == whole.exit_code == whole_json.exit_code == 0, bounded.output
    assert f"… ({len(LONG)} chars; --full for all)" in " ".join(bounded.stdout.split())
    assert "--full for all" not in whole.stdout
    assert " ".join(whole.stdout.split()).count("word") == 100
    [message] = Trace.model_validate_json(whole_json.stdout).by_message
    assert message.reply is not None and message.reply.text == LONG
