"""Record ``histories/sub_agent_wait_before_change.json``: a session whose sub-agent holds a
call for approval, recorded before patch ``sub-agent-calls-wait`` (the parent's send then
answered only once the child's call was decided, and the parent's status stayed
``running`` meanwhile). Never regenerated. With the session's search attributes on, so the
visible status the patched code changes is in the history. From the repository root::

    .venv/bin/python -m tests.versioning.record_sub_agent_wait
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from durable_loop.client.search_attributes import ensure_registered
from durable_loop.client.sessions import SessionClient
from durable_loop.core.registry import ToolRegistry
from durable_loop.core.sub_agent_config import SubAgentConfig
from durable_loop.testing import ScriptedLLM, reply
from tests.conftest import settings_for
from tests.versioning.record import recorded, write

HISTORY = Path(__file__).parent / "histories" / "sub_agent_wait_before_change.json"
SESSION = "sub-agent-wait-before-change"


def payer_registry() -> ToolRegistry:
    """A gated ``pay`` tool and a ``payer`` sub-agent on the parent's model."""
    registry = ToolRegistry()

    @registry.tool(requires_approval=True)
    def pay(amount: int, to: str) -> str:
        """Pay an amount to someone."""
        return f"paid {amount} to {to}"

    registry.add_sub_agent(SubAgentConfig(name="payer", description="Pays", tools=["pay"]))
    return registry


async def converse(sessions: SessionClient, llm: ScriptedLLM) -> None:
    assert await ensure_registered(sessions.client)
    llm.script(
        "before-parent",
        [
            reply.tool_call("payer", {"task": "pay acme 5"}, "r1"),  # the parent
            reply.tool_call("pay", {"amount": 5, "to": "acme"}, "c1"),  # the payer, held
            reply.text("paid"),  # the payer
            reply.text("The payer paid."),  # the parent
        ],
    )
    settings = settings_for(llm, "before-parent").model_copy(update={"search_attributes": True})
    await sessions.start(SESSION, settings)
    sending = asyncio.ensure_future(sessions.send(SESSION, "pay acme 5", message_id="m1"))
    while not (held := (await sessions.tool_approvals(SESSION)).pending):
        await asyncio.sleep(0.05)
    await sessions.decide_tool_call(SESSION, held[0].decision("confirm", "alice"))
    await sending
    await sessions.close(SESSION)


async def record() -> Path:
    return write(await recorded(payer_registry(), SESSION, converse), HISTORY)


if __name__ == "__main__":
    asyncio.run(record())
