"""Record ``histories/session_before_change.json``: a session run by the production
``SessionWorkflow`` as it was before the change in ``variants.py``.

Unlike ``tests/histories``, this file is never regenerated for a workflow change: it
stands for the runs already in flight when a change ships. From the repository root::

    .venv/bin/python -m tests.versioning.record
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

from temporalio.client import WorkflowHistory

from durable_loop.client.history import fetch_histories
from durable_loop.client.sessions import SessionClient
from durable_loop.core import names
from durable_loop.core.registry import ToolRegistry
from durable_loop.store import StoreConfig, open_store
from durable_loop.testing import ScriptedLLM, reply
from durable_loop.testing.pytest_plugin import start_test_environment
from durable_loop.worker.builder import WorkerDeps, build_worker, new_http_client
from tests.conftest import settings_for

HISTORY = Path(__file__).parent / "histories" / "session_before_change.json"


def calculator() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    return registry


async def recorded(
    registry: ToolRegistry,
    session_id: str,
    converse: Callable[[SessionClient, ScriptedLLM], Awaitable[None]],
) -> WorkflowHistory:
    """Run ``converse`` (which starts session ``session_id`` and closes it) on a fresh
    time-skipping server with the scripted endpoint; return the session's history."""
    env = await start_test_environment()
    try:
        with ScriptedLLM() as llm, tempfile.TemporaryDirectory() as tmp:
            store = open_store(StoreConfig.sqlite_file(Path(tmp) / "store.db"))
            http = new_http_client()
            deps = WorkerDeps(store=store, registry=registry, http=http, environ={})
            sessions = SessionClient(env.client, task_queue="recording", search_attributes=False)
            try:
                async with build_worker(env.client, deps, task_queue="recording"):
                    await converse(sessions, llm)
                    workflow_id = names.session_workflow_id(session_id)
                    await env.client.get_workflow_handle(workflow_id).result()
                    [history] = await fetch_histories(env.client, workflow_id)
            finally:
                await http.aclose()
                await store.close()
    finally:
        await env.shutdown()
    return history


def write(history: WorkflowHistory, target: Path) -> Path:
    target.write_text(json.dumps(history.to_json_dict(), indent=1) + "\n")
    print(f"wrote {target} ({target.stat().st_size} bytes)")
    return target


async def record(target: Path = HISTORY) -> Path:
    sid, model = "before-change", "before-change-model"

    async def converse(sessions: SessionClient, llm: ScriptedLLM) -> None:
        llm.script(
            model,
            [reply.tool_call("add", {"a": 2, "b": 3}), reply.text("5"), reply.text("bye")],
        )
        await sessions.start(sid, settings_for(llm, model))
        await sessions.send(sid, "what is 2+3?", message_id="m1")
        await sessions.send(sid, "thanks", message_id="m2")
        await sessions.close(sid)

    return write(await recorded(calculator(), sid, converse), target)


if __name__ == "__main__":
    asyncio.run(record())
