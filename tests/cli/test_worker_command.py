"""`durable-loop worker` as a real process, driven by `durable-loop send` and `trace`."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

from durable_loop.client.trace.models import Trace
from durable_loop.console import app
from durable_loop.store import StoreConfig
from durable_loop.testing import reply
from tests.conftest import unique

REPO = Path(__file__).resolve().parents[2]


def address_of(env) -> str:
    return env.client.service_client.config.target_host


def start_worker(address: str, task_queue: str, db_url: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "durable_loop",
            "worker",
            "--tools",
            "tests.cli.cli_tools:registry",
            "--max-concurrent-activities",
            "4",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env={
            **os.environ,
            "PYTHONPATH": str(REPO),
            "PYTHONUNBUFFERED": "1",
            "TEMPORAL_ADDRESS": address,
            "DURABLE_LOOP_TASK_QUEUE": task_queue,
            "DURABLE_LOOP_DB_URL": db_url,
        },
    )


async def wait_for_line(process: subprocess.Popen[str], marker: str, timeout_s: float) -> str:
    assert process.stdout is not None
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        line = await asyncio.to_thread(process.stdout.readline)
        if marker in line:
            return line
        if not line and process.poll() is not None:
            break
    raise AssertionError(f"{marker!r} not printed; stderr: {process.stderr.read()[-2000:]}")


async def invoke(*args: str):
    env = {"COLUMNS": "200"}
    return await asyncio.to_thread(CliRunner().invoke, app, list(args), env=env)


async def test_worker_process_serves_send_and_trace(temporal_env, scripted_llm, tmp_path):
    address, queue = address_of(temporal_env), unique("q")
    db_url = StoreConfig.sqlite_file(tmp_path / "store.db").url
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model,
        [
            reply.tool_call("multiply", {"a": 6, "b": 7}, call_id="mul-1"),
            reply.text("42", usage={"prompt_tokens": 9, "completion_tokens": 2}),
            reply.error(400, "bad request"),
        ],
    )
    worker = start_worker(address, queue, db_url)
    try:
        ready = await wait_for_line(worker, "worker polling", timeout_s=60)
        assert f"task queue '{queue}'" in ready and "tools: multiply" in ready
        sent = await invoke(
            "send", sid, "six times seven?", "--model", model,
            "--base-url", scripted_llm.base_url, "--address", address, "--task-queue", queue,
        )  # fmt: skip
        assert sent.exit_code == 0, sent.output
        assert sent.stdout.splitlines()[0] == "42"
        assert "status completed · 2 turn(s)" in sent.stderr
        assert "multiply [mul-1] ok" in sent.stderr

        again = await invoke(
            "send", sid, "and again?", "--json", "--address", address, "--task-queue", queue
        )
        assert again.exit_code == 1, again.output
        result = json.loads(again.stdout)
        assert result["status"] == "failed"
        assert result["error"]["code"] == "PROVIDER_BAD_REQUEST"

        traced = await invoke("trace", sid, "--address", address, "--db-url", db_url, "--json")
        assert traced.exit_code == 0, traced.output
        trace = Trace.model_validate_json(traced.stdout)
        assert [t.turn for t in trace.turns] == [1, 2, 3]
        assert trace.turns[2].error.code == "PROVIDER_BAD_REQUEST"
        assert [(c.call_id, c.ok) for c in trace.turns[0].calls] == [("mul-1", True)]
        assert (trace.turns[1].input_tokens, trace.turns[1].output_tokens) == (9, 2)
        assert trace.user_messages == 2

        table = await invoke(
            "trace", sid, "--address", address, "--db-url", db_url, "--web-ui-url", "http://ui.test"
        )
        assert table.exit_code == 0, table.output
        assert "multiply mul-1 ok" in table.stdout
        assert f"http://ui.test/namespaces/default/workflows/session-{sid}" in table.stdout

        worker.send_signal(signal.SIGTERM)
        out, err = await asyncio.to_thread(worker.communicate, timeout=30)
    finally:
        if worker.poll() is None:
            worker.kill()
        await temporal_env.client.get_workflow_handle(f"session-{sid}").terminate("test done")
    assert worker.returncode == 0, err
    assert "worker stopped" in out
