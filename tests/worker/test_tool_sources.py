"""The worker binary loads ensembles from TOML and lists MCP servers it owns; the long-running
tools get their own worker pool. Bad sources stop it with one coded line."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import sys
from pathlib import Path

from temporalio.service import RPCError
from typer.testing import CliRunner

from durable_loop.client.sessions import SessionClient
from durable_loop.console import app
from durable_loop.store import StoreConfig
from durable_loop.testing import reply
from tests.cli.test_worker_command import REPO, address_of
from tests.conftest import settings_for, unique
from tests.tools.ensembles.test_toml import valid_files, write
from tests.tools.mcp.conftest import TOY


def sources(tmp_path: Path, *, toy_command: str | None = None):
    files = valid_files()
    files["tools/word_count.toml"] = files["tools/word_count.toml"].replace(
        "local = true", "long_running = true"
    )
    write(tmp_path / "ensembles", files)
    mcp = tmp_path / "mcp.toml"
    command = toy_command or sys.executable
    mcp.write_text(
        f"[servers.toy]\ncommand = {json.dumps(command)}\nargs = [{json.dumps(str(TOY))}]\n"
        'env = { TOY_TOKEN = "${TOY_SECRET}" }\nstartup_timeout_s = 20\n'
    )
    return {
        "DURABLE_LOOP_ENSEMBLES": str(tmp_path / "ensembles"),
        "DURABLE_LOOP_MCP_CONFIG": str(mcp),
        "TOY_SECRET": "from-the-worker-env",
    }


async def test_worker_serves_toml_and_mcp_tools_and_a_long_running_pool(
    temporal_env, scripted_llm, tmp_path
):
    address, queue = address_of(temporal_env), unique("q")
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model,
        [
            reply.tool_calls(
                ("read_note", {"title": "todo"}),
                ("word_count", {"text": "one two three"}),
                ("toy_env_length", {"name": "TOY_TOKEN"}),
            ),
            reply.text("done"),
        ],
    )
    env = {
        **os.environ,
        **sources(tmp_path),
        "PYTHONPATH": str(REPO),
        "PYTHONUNBUFFERED": "1",
        "TEMPORAL_ADDRESS": address,
        "DURABLE_LOOP_TASK_QUEUE": queue,
        "DURABLE_LOOP_DB_URL": StoreConfig.sqlite_file(tmp_path / "store.db").url,
    }
    worker = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "durable_loop", "worker",
        cwd=REPO, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        ready = await wait_for_line_async(worker, "worker polling", 90)
        assert "read_note" in ready and "toy_shout_text" in ready
        # The ensemble's defaults place its tools on "notes-q"; one pool serves that queue.
        assert ready.rstrip().endswith("; tool queues: notes-q")
        sessions = SessionClient(temporal_env.client, task_queue=queue)
        await sessions.start(sid, settings_for(scripted_llm, model))
        result = await asyncio.wait_for(sessions.send(sid, "go"), timeout=60)
        assert [(t.name, t.ok) for t in result.tool_calls] == [
            ("read_note", True),
            ("word_count", True),
            ("toy_env_length", True),
        ]
        history = await sessions.handle(sid).fetch_history()
        queues = {
            e.activity_task_scheduled_event_attributes.task_queue.name
            for e in history.events
            if e.HasField("activity_task_scheduled_event_attributes")
        }
        assert queues == {queue, "notes-q"}
        tool_results = json.loads(scripted_llm.requests(model)[1].messages[-1]["content"])
        assert tool_results["data"] == {"result": len("from-the-worker-env")}
    finally:
        if worker.returncode is None:
            worker.send_signal(signal.SIGTERM)
            await asyncio.wait_for(worker.wait(), timeout=30)
        with contextlib.suppress(RPCError):
            await sessions_handle(temporal_env, sid).terminate("test done")
    assert worker.returncode == 0


def sessions_handle(temporal_env, sid: str):
    return temporal_env.client.get_workflow_handle(f"session-{sid}")


async def wait_for_line_async(process, marker: str, timeout_s: float) -> str:
    async def read() -> str:
        while True:
            line = (await process.stdout.readline()).decode()
            if marker in line:
                return line
            if not line:
                err = (await process.stderr.read()).decode()
                raise AssertionError(f"{marker!r} never printed; stderr: {err[-2000:]}")

    return await asyncio.wait_for(read(), timeout=timeout_s)


async def run_worker_cli(env: dict[str, str]):
    return await asyncio.to_thread(CliRunner().invoke, app, ["worker"], env=env)


async def test_bad_descriptor_stops_the_worker_with_file_line_and_field(temporal_env, tmp_path):
    env = sources(tmp_path)
    bad = tmp_path / "ensembles" / "tools" / "read_note.toml"
    bad.write_text(bad.read_text().replace('type = "string"', 'type = "strin"'))
    env |= {"TEMPORAL_ADDRESS": address_of(temporal_env), "DURABLE_LOOP_TASK_QUEUE": unique("q")}
    result = await run_worker_cli(env)
    assert result.exit_code == 2, result.output
    assert "error: DESCRIPTOR_INVALID:" in result.stderr
    assert "read_note.toml:13: arguments.properties.title.type" in result.stderr


async def test_missing_mcp_server_stops_the_worker_naming_it(temporal_env, tmp_path):
    env = sources(tmp_path, toy_command="/no/such/server")
    env |= {"TEMPORAL_ADDRESS": address_of(temporal_env), "DURABLE_LOOP_TASK_QUEUE": unique("q")}
    result = await run_worker_cli(env)
    assert result.exit_code == 2, result.output
    assert "error: MCP_SERVER_UNAVAILABLE: MCP server 'toy'" in result.stderr
    assert shutil.which("/no/such/server") is None
