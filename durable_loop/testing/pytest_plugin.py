"""pytest fixtures: a Temporal test environment, a scripted LLM and a worker factory.

Set ``DURABLE_LOOP_TEST_SERVER=dev`` to run against the embedded dev server instead of
the time-skipping test server (the default). ``DURABLE_LOOP_TEST_DB_URL`` points the
store at another database (e.g. PostgreSQL). ``DURABLE_LOOP_TEST_CODEC_KEYS`` (same format
as ``DURABLE_LOOP_CODEC_KEYS``) runs every ``loop_worker`` with payload encryption.

An ``async def`` test that takes one of these fixtures runs on pytest-asyncio in the
session's event loop (the one the Temporal environment lives in), without any asyncio
setting in the project: pip install 'durable-loop[testing]' and write the test.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import pytest
import pytest_asyncio
from temporalio.client import Client, WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter
from temporalio.service import RPCError
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Interceptor, Worker

from durable_loop.cli.binaries import temporal_test_server
from durable_loop.cli.devserver import start_local_environment
from durable_loop.client.history import fetch_histories
from durable_loop.client.sessions import SessionClient
from durable_loop.core import names
from durable_loop.core.registry import ToolRegistry
from durable_loop.store import StoreConfig, TranscriptStore, open_store
from durable_loop.testing.history import replay_failures
from durable_loop.testing.scripted import ScriptedLLM
from durable_loop.worker.builder import WorkerDeps, WorkerTuning, build_worker, new_http_client

FIXTURES = frozenset({"temporal_env", "scripted_llm", "store_url", "loop_worker"})


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object) -> None:
    """Mark an async test that takes the fixtures above as a session-loop asyncio test,
    unless the test, its class or its module says how to run it."""
    if not inspect.iscoroutinefunction(obj) or not isinstance(
        collector, pytest.Module | pytest.Class
    ):
        return
    if not collector.funcnamefilter(name) or collector.get_closest_marker("asyncio"):
        return
    if any(mark.name == "asyncio" for mark in getattr(obj, "pytestmark", [])):
        return
    if FIXTURES & inspect.signature(obj).parameters.keys():
        pytest.mark.asyncio(loop_scope="session")(obj)


def test_server_kind() -> str:
    kind = os.environ.get("DURABLE_LOOP_TEST_SERVER", "timeskip").strip().lower()
    if kind not in {"timeskip", "dev"}:
        raise pytest.UsageError("DURABLE_LOOP_TEST_SERVER must be 'timeskip' or 'dev'")
    return kind


async def start_test_environment() -> WorkflowEnvironment:
    if test_server_kind() == "dev":
        return await start_local_environment()
    return await WorkflowEnvironment.start_time_skipping(
        data_converter=pydantic_data_converter,
        test_server_existing_path=temporal_test_server(),
    )


@asynccontextmanager
async def running_test_environment() -> AsyncIterator[WorkflowEnvironment]:
    """A test environment of the kind ``DURABLE_LOOP_TEST_SERVER`` names, shut down after."""
    env = await start_test_environment()
    try:
        yield env
    finally:
        await env.shutdown()


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def temporal_env() -> AsyncIterator[WorkflowEnvironment]:
    async with running_test_environment() as env:
        yield env


@pytest.fixture(scope="session")
def scripted_llm() -> Iterator[ScriptedLLM]:
    server = ScriptedLLM().start()
    yield server
    server.stop()


@pytest.fixture
def store_url(tmp_path: Path) -> str:
    override = os.environ.get("DURABLE_LOOP_TEST_DB_URL")
    if override:
        return override
    return StoreConfig.sqlite_file(tmp_path / "store.db").url


class LoopWorker:
    """A running worker plus the handles a test needs."""

    def __init__(self, worker: Worker, store: TranscriptStore, sessions: SessionClient) -> None:
        self.worker = worker
        self.store = store
        self.sessions = sessions
        self.task_queue = worker.task_queue

    async def histories(self, session_id: str) -> list[WorkflowHistory]:
        """Every run of the session's workflow, oldest first."""
        return await fetch_histories(self.sessions.client, names.session_workflow_id(session_id))


WorkerFactory = Callable[..., AbstractAsyncContextManager[LoopWorker]]


@pytest_asyncio.fixture(loop_scope="session")
async def loop_worker(
    temporal_env: WorkflowEnvironment, store_url: str
) -> AsyncIterator[WorkerFactory]:
    """``async with loop_worker(registry) as w:`` runs a worker on a fresh task queue.

    On teardown every session a test started (every run, across continue-as-new) is
    replayed against the current workflow code; a replay failure fails the test. Pass the
    same ``task_queue`` twice to stop a worker and start another one on the same sessions.
    """
    clients: list[SessionClient] = []

    @asynccontextmanager
    async def factory(
        registry: ToolRegistry | None = None,
        *,
        task_queue: str | None = None,
        environ: dict[str, str] | None = None,
        tuning: WorkerTuning | None = None,
        interceptors: Sequence[Interceptor] = (),
        data_converter: DataConverter | None = None,
    ) -> AsyncIterator[LoopWorker]:
        """``data_converter``: e.g. ``durable_loop.client.codec.data_converter(ring)`` to run the
        worker and its client with payload encryption (histories replay with it too)."""
        store = open_store(StoreConfig(url=store_url))
        http = new_http_client()
        deps = WorkerDeps(
            store=store,
            registry=registry or ToolRegistry(),
            http=http,
            environ=environ if environ is not None else {},
        )
        queue = task_queue or f"test-{uuid.uuid4().hex[:12]}"
        client = temporal_env.client
        data_converter = data_converter or encrypted_test_converter()
        if data_converter is not None:
            config = client.config()
            config["data_converter"] = data_converter
            client = Client(**config)
        worker = build_worker(
            client, deps, task_queue=queue, tuning=tuning, interceptors=interceptors
        )
        # search attributes stay off unless a test turns them on (they are registered on the
        # shared server once a test registers them, which would make tests order-dependent)
        sessions = SessionClient(client, task_queue=queue, search_attributes=False)
        clients.append(sessions)
        try:
            async with worker:
                yield LoopWorker(worker, store, sessions)
        finally:
            await http.aclose()
            await store.close()

    yield factory
    await _replay_and_close(temporal_env.client, clients)


def encrypted_test_converter() -> DataConverter | None:
    keys = os.environ.get("DURABLE_LOOP_TEST_CODEC_KEYS", "").strip()
    if not keys:
        return None
    from durable_loop.client.codec import KeyRing, data_converter

    return data_converter(KeyRing.parse(keys))


async def _replay_and_close(client: Client, clients: list[SessionClient]) -> None:
    failures: dict[str, str] = {}
    done: set[str] = set()
    # Each client has its own data converter (encrypted or not); the newest goes first,
    # since after a key rotation it holds every key.
    for sessions in reversed(clients):
        histories: list[WorkflowHistory] = []
        for workflow_id in sorted(set(sessions.started_workflow_ids) - done):
            done.add(workflow_id)
            histories.extend(await fetch_histories(client, workflow_id))
            with contextlib.suppress(RPCError):
                await client.get_workflow_handle(workflow_id).terminate("test finished")
        converter = sessions.client.data_converter
        failures.update(await replay_failures(histories, data_converter=converter))
    if failures:
        lines = "\n".join(f"  run {run_id}: {err}" for run_id, err in failures.items())
        pytest.fail(f"workflow histories do not replay:\n{lines}", pytrace=False)
