"""One session that uses every feature, run once for the package and then read back by each
test. The package has a server of its own: the session's simulated hours skip only its own
timers, and the session's search attributes are registered on it. The suite's switches
apply: ``DURABLE_LOOP_TEST_SERVER``, ``DURABLE_LOOP_TEST_DB_URL``,
``DURABLE_LOOP_TEST_CODEC_KEYS``."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx
import pytest
import pytest_asyncio
from temporalio.client import Client
from temporalio.service import RPCError
from temporalio.testing import WorkflowEnvironment

from durable_loop.client.search_attributes import ensure_registered
from durable_loop.client.sessions import SessionClient
from durable_loop.service import ServiceDeps, create_app
from durable_loop.service.auth import COOKIE, TokenBook
from durable_loop.store import StoreConfig, open_store
from durable_loop.store.workspace import open_workspace_store
from durable_loop.testing.pytest_plugin import encrypted_test_converter, running_test_environment
from durable_loop.testing.scripted import ScriptedLLM
from durable_loop.worker.builder import WorkerDeps, build_worker, new_http_client
from tests.whole.inspectors import TOKENS, Seen, inspect
from tests.whole.session import Drive, Rig, drive, registry
from tests.workflows.approval_kit import Payments


@dataclass
class Whole:
    rig: Rig
    drive: Drive
    seen: Seen
    store_url: str


@pytest_asyncio.fixture(scope="package", loop_scope="session")
async def temporal_env() -> AsyncIterator[WorkflowEnvironment]:
    async with running_test_environment() as env:
        yield env


@pytest_asyncio.fixture(scope="package", loop_scope="session")
async def whole(
    temporal_env: WorkflowEnvironment,
    scripted_llm: ScriptedLLM,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[Whole]:
    store_url = os.environ.get("DURABLE_LOOP_TEST_DB_URL") or (
        StoreConfig.sqlite_file(tmp_path_factory.mktemp("whole") / "store.db").url
    )
    client = temporal_env.client
    if (converter := encrypted_test_converter()) is not None:
        client = Client(**{**client.config(), "data_converter": converter})
    queue = f"whole-{uuid.uuid4().hex[:12]}"
    # the server is this package's own: its sessions keep their search attributes
    sessions = SessionClient(
        client, task_queue=queue, search_attributes=await ensure_registered(client)
    )
    store = open_store(StoreConfig(url=store_url))
    workspace = open_workspace_store(StoreConfig(url=store_url))
    http = new_http_client()
    flaky = ScriptedLLM().start()
    deps = ServiceDeps(
        sessions=sessions, tokens=TokenBook(TOKENS), workspace=workspace, db_url=store_url
    )
    transport = httpx.ASGITransport(app=create_app(deps), raise_app_exceptions=False)
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://service") as service:
            service.cookies.set(COOKIE, next(iter(TOKENS)))
            rig = Rig(temporal_env, sessions, service, workspace, flaky, scripted_llm, Payments())
            worker_deps = WorkerDeps(store=store, registry=registry(rig), http=http, environ={})
            async with build_worker(client, worker_deps, task_queue=queue):
                done = await drive(rig)
                seen = await inspect(rig, done, store_url)
            yield Whole(rig, done, seen, store_url)
    finally:
        for workflow_id in sorted(sessions.started_workflow_ids):
            with contextlib.suppress(RPCError):
                await client.get_workflow_handle(workflow_id).terminate("test finished")
        flaky.stop()
        await http.aclose()
        await store.close()
        await workspace.close()
