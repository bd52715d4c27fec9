"""Where BFCL sessions run: one Temporal environment and store for the whole run, and one
worker per batch of entries (its tools are those entries' functions)."""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
from temporalio.client import Client

from durable_loop.client.sessions import SessionClient
from durable_loop.core.registry import ToolRegistry
from durable_loop.evals.harness import start_environment
from durable_loop.evals.runner import EvalTarget
from durable_loop.store import StoreConfig, TranscriptStore, open_store
from durable_loop.store.workspace import WorkspaceStore, open_workspace_store
from durable_loop.worker.builder import WorkerDeps, build_worker, new_http_client


@dataclass(frozen=True)
class BfclEnvironment:
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
        queue = f"bfcl-{uuid.uuid4().hex[:8]}"
        sessions = SessionClient(self.client, task_queue=queue, search_attributes=False)
        async with build_worker(self.client, deps, task_queue=queue):
            yield EvalTarget(sessions=sessions, store=self.store, workspace=self.workspace)


@asynccontextmanager
async def bfcl_environment(kind: str, environ: Mapping[str, str]) -> AsyncIterator[BfclEnvironment]:
    """A throw-away Temporal environment (``timeskip`` or ``dev``) and SQLite store."""
    with tempfile.TemporaryDirectory(prefix="durable-loop-bfcl-") as tmp:
        config = StoreConfig.sqlite_file(Path(tmp) / "bfcl.db")
        store = open_store(config)
        workspace = open_workspace_store(config)
        http = new_http_client()
        env = await start_environment(kind)
        try:
            yield BfclEnvironment(env.client, store, workspace, http, environ)
        finally:
            await env.shutdown()
            await http.aclose()
            await workspace.close()
            await store.close()
