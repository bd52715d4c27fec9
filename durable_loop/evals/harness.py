"""Where eval sessions run: a Temporal environment, a store, the eval tools and a worker.

Offline runs use the time-skipping test server; live runs use the embedded dev server
(real timers: client timeouts and retries behave as in production).
"""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from durable_loop.cli.binaries import temporal_test_server
from durable_loop.cli.devserver import start_local_environment
from durable_loop.client.sessions import SessionClient
from durable_loop.core.registry import ToolRegistry
from durable_loop.evals.runner import EvalTarget
from durable_loop.evals.scenarios_approvals import invoice_tools
from durable_loop.evals.scenarios_recovery import note_tools
from durable_loop.store import StoreConfig, TranscriptStore, open_store
from durable_loop.store.workspace import WorkspaceStore, open_workspace_store
from durable_loop.tools.everyday import Notebook, demo_registry
from durable_loop.tools.workspace import workspace_tools
from durable_loop.worker.builder import WorkerDeps, build_worker, new_http_client

WORKSPACE_TOOLS = ("state_get", "state_patch", "facts_propose")


def eval_registry(workspace: WorkspaceStore) -> ToolRegistry:
    """Every tool a scenario may offer; each job narrows it with ``tool_allowlist``."""
    return (
        workspace_tools(workspace)
        .merged(note_tools())
        .merged(invoice_tools())
        .merged(demo_registry(Notebook()))
    )


async def start_environment(kind: str) -> WorkflowEnvironment:
    if kind == "dev":
        return await start_local_environment()
    return await WorkflowEnvironment.start_time_skipping(
        data_converter=pydantic_data_converter,
        test_server_existing_path=temporal_test_server(),
    )


@dataclass(frozen=True)
class EvalEnvironment:
    """A Temporal environment and a store that workers of one run share."""

    name: str
    client: Client
    store: TranscriptStore
    workspace: WorkspaceStore
    http: httpx.AsyncClient
    environ: Mapping[str, str]

    @asynccontextmanager
    async def batch(self, registry: ToolRegistry) -> AsyncIterator[EvalTarget]:
        """A worker serving ``registry`` on its own task queue, for as long as it is open."""
        deps = WorkerDeps(
            store=self.store,
            registry=registry,
            http=self.http,
            environ=dict(self.environ),
            workspace=self.workspace,
        )
        queue = f"{self.name}-{uuid.uuid4().hex[:8]}"
        sessions = SessionClient(self.client, task_queue=queue, search_attributes=False)
        async with build_worker(self.client, deps, task_queue=queue):
            yield EvalTarget(sessions=sessions, store=self.store, workspace=self.workspace)


@asynccontextmanager
async def eval_environment(
    kind: str, environ: Mapping[str, str], name: str = "eval"
) -> AsyncIterator[EvalEnvironment]:
    """A throw-away Temporal environment (``timeskip`` or ``dev``) and SQLite store; ``name``
    names its directory, database and task queues."""
    with tempfile.TemporaryDirectory(prefix=f"durable-loop-{name}-") as tmp:
        config = StoreConfig.sqlite_file(Path(tmp) / f"{name}.db")
        store = open_store(config)
        workspace = open_workspace_store(config)
        http = new_http_client()
        env = await start_environment(kind)
        try:
            yield EvalEnvironment(name, env.client, store, workspace, http, environ)
        finally:
            await env.shutdown()
            await http.aclose()
            await workspace.close()
            await store.close()


@asynccontextmanager
async def eval_target(kind: str, environ: Mapping[str, str]) -> AsyncIterator[EvalTarget]:
    """A throw-away environment, SQLite store and worker (every eval tool) for one run."""
    async with (
        eval_environment(kind, environ) as env,
        env.batch(eval_registry(env.workspace)) as target,
    ):
        yield target
