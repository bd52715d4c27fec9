"""`durable-loop worker --deployment-name` as a real process, and `durable-loop deployment`
showing its builds, the sessions on each, and making a build current.

On the embedded dev server: the time-skipping server has no worker deployments."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator

import pytest_asyncio
from temporalio.testing import WorkflowEnvironment

from durable_loop.cli.devserver import start_local_environment
from durable_loop.client.sessions import SessionClient
from durable_loop.store import StoreConfig
from durable_loop.testing import reply
from durable_loop.worker.build_id import default_build_id
from tests.cli.test_worker_command import REPO, address_of, invoke, wait_for_line
from tests.conftest import settings_for, unique


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def temporal_env() -> AsyncIterator[WorkflowEnvironment]:
    env = await start_local_environment()
    try:
        yield env
    finally:
        await env.shutdown()


def start_versioned_worker(
    address: str, queue: str, db_url: str, deployment: str, *build_flag: str
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "durable_loop", "worker", *build_flag],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env={
            **os.environ,
            "PYTHONPATH": str(REPO),
            "PYTHONUNBUFFERED": "1",
            "TEMPORAL_ADDRESS": address,
            "DURABLE_LOOP_TASK_QUEUE": queue,
            "DURABLE_LOOP_DB_URL": db_url,
            "DURABLE_LOOP_DEPLOYMENT_NAME": deployment,
        },
    )


async def test_a_versioned_worker_and_its_deployment_from_the_command_line(
    temporal_env, scripted_llm, tmp_path
):
    address, queue, deployment = address_of(temporal_env), unique("q"), unique("deploy")
    db_url = StoreConfig.sqlite_file(tmp_path / "store.db").url
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.text("on the current build")])
    missing = await invoke("deployment", deployment, "--address", address)
    default_build = start_versioned_worker(address, queue, db_url, deployment)
    named = start_versioned_worker(address, queue, db_url, deployment, "--build-id", "b2")
    workers = [default_build, named]
    try:
        ready = await wait_for_line(default_build, "worker polling", timeout_s=60)
        assert f"deployment '{deployment}' build '{default_build_id()}'" in ready
        await wait_for_line(named, "worker polling", timeout_s=60)
        for _ in range(50):  # the server knows a build once its worker has polled
            made = await invoke(
                "deployment", deployment, "--set-current", "b2", "--address", address
            )
            if made.exit_code == 0:
                break
            await asyncio.sleep(0.2)
        sessions = SessionClient(temporal_env.client, task_queue=queue, search_attributes=False)
        await sessions.start(sid, settings_for(scripted_llm, model))
        answer = await sessions.send(sid, "hello")
        for _ in range(50):  # visibility is a moment behind
            shown = await invoke("deployment", deployment, "--json", "--address", address)
            view = json.loads(shown.stdout)
            on = {v["build_id"]: v["running_sessions"] for v in view["versions"]}
            if on.get("b2"):
                break
            await asyncio.sleep(0.2)
        table = await invoke("deployment", deployment, "--address", address)
        for worker in workers:
            worker.send_signal(signal.SIGTERM)
        for worker in workers:
            await asyncio.to_thread(worker.communicate, timeout=30)
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
        await temporal_env.client.get_workflow_handle(f"session-{sid}").terminate("test done")

    assert missing.exit_code == 2 and "NO_DEPLOYMENT" in missing.output
    assert made.exit_code == 0, made.output
    assert answer.reply == "on the current build"
    assert view["current_build_id"] == "b2"
    assert on == {default_build_id(): 0, "b2": 1}
    assert table.stdout.splitlines()[0] == f"deployment {deployment}: current build b2"
    assert ["b2", "CURRENT", "-", "1", "1"] in [line.split() for line in table.stdout.splitlines()]
