"""Record ``histories/fallback_budget_before_change.json``: a session recorded before the
fallback circuit breaker and the budget-crossing rule (patches ``fallback-circuit-breaker``
and ``budget-crossing-turn-runs-no-tools``), never regenerated.

Its primary fails every turn with 503 (the old code tries it again on every turn, where
the breaker would skip it), and its second message crosses the token budget on a turn that
asks for a tool (the old code runs it). Recorded from a checkout of the code before the
change (``git archive 545ca5d``), with this file run from the repository root::

    PYTHONPATH=<old checkout> .venv/bin/python tests/versioning/record_fallback_budget.py
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

from durable_loop.client.history import fetch_histories
from durable_loop.client.sessions import SessionClient
from durable_loop.core import names
from durable_loop.core.config import RuntimeConfig, SessionSettings
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.registry import ToolRegistry
from durable_loop.core.retry import RetrySettings
from durable_loop.store import StoreConfig, open_store
from durable_loop.testing import ScriptedLLM, reply
from durable_loop.testing.pytest_plugin import start_test_environment
from durable_loop.worker.builder import WorkerDeps, build_worker, new_http_client

HISTORY = Path(__file__).parent / "histories" / "fallback_budget_before_change.json"
FAST = RetrySettings(initial_interval_s=0.1, maximum_interval_s=0.2, maximum_attempts=2)


def calculator() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    return registry


def settings(llm: ScriptedLLM) -> SessionSettings:
    def model(name: str) -> LlmEndpoint:
        return LlmEndpoint(model=name, base_url=llm.base_url, timeout_s=10.0, retry=FAST)

    return SessionSettings(
        llm=model("before-primary"),
        fallback_llms=[model("before-backup")],
        runtime=RuntimeConfig(max_session_tokens=40),
    )


async def record(target: Path = HISTORY) -> Path:
    env = await start_test_environment()
    try:
        with ScriptedLLM() as llm, tempfile.TemporaryDirectory() as tmp:
            store = open_store(StoreConfig.sqlite_file(Path(tmp) / "store.db"))
            http = new_http_client()
            deps = WorkerDeps(store=store, registry=calculator(), http=http, environ={})
            sid = "fallback-budget-before-change"
            llm.script("before-primary", [reply.error(503)] * 6)
            llm.script(
                "before-backup",
                [
                    reply.tool_call("add", {"a": 1, "b": 2}),  # 15 tokens
                    reply.text("3"),  # 30
                    reply.tool_call("add", {"a": 2, "b": 2}),  # 45: crosses 40
                ],
            )
            sessions = SessionClient(env.client, task_queue="recording", search_attributes=False)
            try:
                async with build_worker(env.client, deps, task_queue="recording"):
                    await sessions.start(sid, settings(llm))
                    await sessions.send(sid, "1+2?", message_id="m1")
                    await sessions.send(sid, "2+2?", message_id="m2")
                    await sessions.close(sid)
                    workflow_id = names.session_workflow_id(sid)
                    await env.client.get_workflow_handle(workflow_id).result()
                    [history] = await fetch_histories(env.client, workflow_id)
            finally:
                await http.aclose()
                await store.close()
    finally:
        await env.shutdown()
    target.write_text(json.dumps(history.to_json_dict(), indent=1) + "\n")
    return target


if __name__ == "__main__":
    path = asyncio.run(record())
    print(f"wrote {path} ({path.stat().st_size} bytes)")
