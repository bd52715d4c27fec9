"""Record ``histories/cancel_parked_before_change.json``: a session whose message parks on
a held ``pay`` call, gets a cancel Signal (dropped before patch ``cancel-parked``), then is
approved and completes. Never regenerated. From the repository root::

    .venv/bin/python -m tests.versioning.record_cancel_parked

Recorded with ``RunControl.start`` as it was before the patch (it asked only
``cancel-message``): in this conversation that is the whole of the change's reach (no
``cancel_message`` Update is sent), so the history is the one the code before it records.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from temporalio import workflow

from durable_loop.client.sessions import SessionClient
from durable_loop.core import names
from durable_loop.core.contracts import CancelMessageRequest
from durable_loop.core.registry import ToolRegistry
from durable_loop.testing import ScriptedLLM, reply
from durable_loop.workflows import run_control
from tests.conftest import settings_for
from tests.versioning.record import recorded, write

HISTORY = Path(__file__).parent / "histories" / "cancel_parked_before_change.json"
SESSION = "cancel-parked-before-change"


def payer() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool(requires_approval=True)
    def pay(amount: int, to: str) -> str:
        """Pay an amount to someone."""
        return f"paid {amount} to {to}"

    return registry


async def converse(sessions: SessionClient, llm: ScriptedLLM) -> None:
    llm.script(
        "before-cancel",
        [reply.tool_call("pay", {"amount": 5, "to": "acme"}, "c1"), reply.text("Paid.")],
    )
    await sessions.start(SESSION, settings_for(llm, "before-cancel"))
    first = await sessions.send(SESSION, "pay acme 5", message_id="m1")
    assert first.status == "awaiting_approval", first
    handle = sessions.client.get_workflow_handle(names.session_workflow_id(SESSION))
    await handle.signal(names.SIGNAL_CANCEL_MESSAGE, CancelMessageRequest(reason="stop"))
    [held] = (await sessions.tool_approvals(SESSION)).pending  # the Signal was dropped
    await sessions.decide_tool_call(SESSION, held.decision("confirm", "alice"))
    final = await sessions.message_result(SESSION, "m1")
    assert final.status == "completed", final
    await sessions.close(SESSION)


def start_before_patch(self: run_control.RunControl) -> None:
    self.guarding = workflow.patched(run_control.PATCH_ID)


async def record() -> Path:
    run_control.RunControl.start = start_before_patch  # type: ignore[method-assign]
    return write(await recorded(payer(), SESSION, converse), HISTORY)


if __name__ == "__main__":
    asyncio.run(record())
