"""Record ``histories/in_doubt_before_change.json``: a session whose ``effect="once"``
``send_mail`` call has an attempt that stopped inside the body; before patch
``in-doubt-to-person`` the next attempt stores ``TOOL_CALL_IN_DOUBT`` as the call's final
result and the model reads it. Never regenerated. From the repository root::

    .venv/bin/python -m tests.versioning.record_in_doubt

The first attempt raises with its marker kept (``ToolAttempts.end`` does nothing while
recording): to the second attempt that is an attempt that died inside the body, as after a
worker kill; the history holds only the activity's final result.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from durable_loop.client.sessions import SessionClient
from durable_loop.core.registry import ToolContext, ToolRegistry
from durable_loop.core.retry import RetrySettings
from durable_loop.store import tool_attempts
from durable_loop.testing import ScriptedLLM, reply
from tests.conftest import settings_for
from tests.versioning.record import recorded, write

HISTORY = Path(__file__).parent / "histories" / "in_doubt_before_change.json"
SESSION = "in-doubt-before-change"


def mailer() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool(effect="once", retry=RetrySettings(maximum_attempts=3, initial_interval_s=0.1))
    def send_mail(to: str, ctx: ToolContext) -> str:
        """Send an e-mail."""
        if ctx.attempt == 1:
            raise ConnectionError("the worker died here")
        return f"sent to {to}"

    return registry


async def converse(sessions: SessionClient, llm: ScriptedLLM) -> None:
    llm.script(
        "before-in-doubt",
        [reply.tool_call("send_mail", {"to": "ana@example.com"}, "c1"), reply.text("Unsure.")],
    )
    await sessions.start(SESSION, settings_for(llm, "before-in-doubt"))
    result = await sessions.send(SESSION, "mail ana", message_id="m1")
    assert result.status == "completed", result
    assert result.tool_calls[0].error_codes == ["TOOL_CALL_IN_DOUBT"], result
    await sessions.close(SESSION)


async def keep_marker(self: tool_attempts.ToolAttempts, key: str) -> None:
    return None


async def record() -> Path:
    tool_attempts.ToolAttempts.end = keep_marker  # type: ignore[method-assign]
    return write(await recorded(mailer(), SESSION, converse), HISTORY)


if __name__ == "__main__":
    asyncio.run(record())
