"""``durable-loop chat`` fed from stdin: tool calls show as they happen, and a proposal
the session waits for is approved inline."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest_asyncio

from durable_loop.core.config import WorkspaceSettings
from durable_loop.testing import reply
from durable_loop.tools.workspace import workspace_tools
from tests.client.kit import FACTS, RENAME, workspace_store
from tests.conftest import settings_for, unique
from tests.workflows.approval_kit import Payments, approval_settings

CLI = str(Path(sys.executable).with_name("durable-loop"))


@pytest_asyncio.fixture
async def ws(store_url):
    store = workspace_store(store_url)
    yield store
    await store.close()


async def run_chat(args: list[str], stdin: str, timeout_s: float = 60) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        CLI,
        "chat",
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"},
    )
    out, err = await asyncio.wait_for(process.communicate(stdin.encode()), timeout_s)
    return process.returncode or 0, out.decode(), err.decode()


def address_of(env) -> str:
    return env.client.service_client.config.target_host


def chat_args(sid: str, settings_file: Path, env, w) -> list[str]:
    """Chat as carol with session ``sid`` on the test worker's queue, polling fast."""
    return [
        sid,
        "--settings",
        str(settings_file),
        "--as",
        "carol",
        "--address",
        address_of(env),
        "--task-queue",
        w.task_queue,
        "--poll",
        "0.1",
    ]


async def test_chat_shows_tool_calls_and_approves_inline(
    loop_worker, scripted_llm, temporal_env, ws, tmp_path
):
    model, sid = unique("m"), unique("s")
    await ws.create(sid, facts=FACTS)
    scripted_llm.script(
        model,
        [
            reply.tool_call("facts_propose", RENAME),
            reply.text("Renamed, thanks for confirming."),
        ],
    )
    settings = settings_for(scripted_llm, model).model_copy(
        update={"workspace": WorkspaceSettings(block_until_decision=True)}
    )
    settings_file = tmp_path / "settings.json"
    settings_file.write_text(settings.model_dump_json())
    async with loop_worker(workspace_tools(ws)) as w:
        w.sessions.started_workflow_ids.add(f"session-{sid}")  # replayed on teardown
        code, out, err = await run_chat(
            chat_args(sid, settings_file, temporal_env, w),
            "please rename the title\na\nship it\n/status\n/quit\n",
        )
    assert code == 0, err
    print(out)
    lines = out.splitlines()
    calls = next(i for i, line in enumerate(lines) if "· calls facts_propose" in line)
    prompt = next(i for i, line in enumerate(lines) if "approve? [a]pprove" in line)
    answer = next(i for i, line in enumerate(lines) if line.startswith("assistant> "))
    assert calls < prompt < answer, out
    assert any('replace /title = "New title"' in line for line in lines), out
    assert any(" committed by carol (facts version 1)" in line for line in lines), out
    assert lines[answer] == "assistant> Renamed, thanks for confirming."
    assert any(line.startswith("idle · model") and "1 message(s)" in line for line in lines), out
    snap = await ws.snapshot(sid)
    assert snap.facts["title"] == "New title"
    audit = [a for a in await ws.audit(sid) if a.target == "facts"]
    assert {(a.actor, a.comment) for a in audit} == {("carol", "ship it")}


async def test_chat_needs_a_session_or_a_model():
    code, _, err = await run_chat([], "")
    assert code == 2
    assert err.strip().startswith("error: NO_SESSION:")


async def test_chat_edits_a_held_tool_call_inline(
    loop_worker, scripted_llm, temporal_env, tmp_path
):
    payments = Payments()
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model, [reply.tool_call("pay", {"amount": 250, "to": "acme"}, "c1"), reply.text("Paid.")]
    )
    settings_file = tmp_path / "settings.json"
    settings_file.write_text(approval_settings(scripted_llm, model, temporal_env).model_dump_json())
    async with loop_worker(payments.registry()) as w:
        w.sessions.started_workflow_ids.add(f"session-{sid}")  # replayed on teardown
        code, out, err = await run_chat(
            chat_args(sid, settings_file, temporal_env, w),
            'pay acme\ne\n{"amount": 200, "to": "acme"}\nagreed\n/quit\n',
        )
    assert code == 0, err
    lines = out.splitlines()
    assert any(line.strip() == '"amount": 250,' for line in lines), out
    assert any("c1 approved (edited: amount) by carol" in line for line in lines), out
    assert lines.index("assistant> Paid.") > next(
        i for i, line in enumerate(lines) if "run it? [a]pprove" in line
    )
    assert [(a, to) for a, to, _ in payments.made] == [(200, "acme")]
