"""Record ``histories/fallback_budget_before_change.json``: a session recorded before the
fallback circuit breaker and the budget-crossing rule (patches ``fallback-circuit-breaker``
and ``budget-crossing-turn-runs-no-tools``), never regenerated.

Its primary fails every turn with 503 (the old code tries it again on every turn, where
the breaker would skip it), and its second message crosses the token budget on a turn that
asks for a tool (the old code runs it). Recorded with the package as it was before the
change and these tests, from outside the repository (the working directory comes first on
``sys.path``)::

    git archive 545ca5d durable_loop | tar -x -C /tmp/old && cd /tmp/old
    PYTHONPATH=/tmp/old:<repo> <repo>/.venv/bin/python -m tests.versioning.record_fallback_budget
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from durable_loop.client.sessions import SessionClient
from durable_loop.core.config import RuntimeConfig, SessionSettings
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.retry import RetrySettings
from durable_loop.testing import ScriptedLLM, reply
from tests.versioning.record import calculator, recorded, write

HISTORY = Path(__file__).parent / "histories" / "fallback_budget_before_change.json"
FAST = RetrySettings(initial_interval_s=0.1, maximum_interval_s=0.2, maximum_attempts=2)
SESSION = "fallback-budget-before-change"


def settings(llm: ScriptedLLM) -> SessionSettings:
    def model(name: str) -> LlmEndpoint:
        return LlmEndpoint(model=name, base_url=llm.base_url, timeout_s=10.0, retry=FAST)

    return SessionSettings(
        llm=model("before-primary"),
        fallback_llms=[model("before-backup")],
        runtime=RuntimeConfig(max_session_tokens=40),
    )


async def converse(sessions: SessionClient, llm: ScriptedLLM) -> None:
    llm.script("before-primary", [reply.error(503)] * 6)
    llm.script(
        "before-backup",
        [
            reply.tool_call("add", {"a": 1, "b": 2}),  # 15 tokens
            reply.text("3"),  # 30
            reply.tool_call("add", {"a": 2, "b": 2}),  # 45: crosses 40
        ],
    )
    await sessions.start(SESSION, settings(llm))
    await sessions.send(SESSION, "1+2?", message_id="m1")
    await sessions.send(SESSION, "2+2?", message_id="m2")
    await sessions.close(SESSION)


if __name__ == "__main__":
    write(asyncio.run(recorded(calculator(), SESSION, converse)), HISTORY)
