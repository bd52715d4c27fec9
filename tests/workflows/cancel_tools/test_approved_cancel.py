"""Cancel meets approval (issue 28, section 1): a cancel right after an approval waits for
the approved call's started body and records what happened; a message parked on held calls
can be cancelled, and its held calls never run."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from durable_loop.core.errors import ErrorCode
from durable_loop.core.registry import ToolContext, ToolRegistry
from durable_loop.testing import reply
from tests.conftest import unique
from tests.workflows.approval_kit import approval_settings
from tests.workflows.proposal_kit import tool_envelopes

PAY = {"amount": 250, "to": "acme"}
BODY_S = 1.0


class SlowPayments:
    """A gated ``pay`` whose body (sync, or async with ``run_async``) takes ~1 s; counts the
    bodies that ran to the end."""

    def __init__(self, *, run_async: bool = False) -> None:
        self.started = 0
        self.paid = 0
        self.run_async = run_async
        self._lock = threading.Lock()

    def registry(self) -> ToolRegistry:
        registry = ToolRegistry()

        if self.run_async:

            @registry.tool(requires_approval=True)
            async def pay(amount: int, to: str, ctx: ToolContext) -> str:
                """Pay an amount to someone (slowly)."""
                self.started += 1
                await asyncio.sleep(BODY_S)
                self.paid += 1
                return f"paid {amount} to {to}"

            return registry

        @registry.tool(requires_approval=True, name="pay")
        def pay_sync(amount: int, to: str, ctx: ToolContext) -> str:
            """Pay an amount to someone (slowly)."""
            with self._lock:
                self.started += 1
            time.sleep(BODY_S)
            with self._lock:
                self.paid += 1
            return f"paid {amount} to {to}"

        return registry


async def parked(w, scripted_llm, env, payments_steps):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, payments_steps)
    await w.sessions.start(sid, approval_settings(scripted_llm, model, env))
    first = await w.sessions.send(sid, "pay acme 250", message_id=f"msg-{sid}")
    assert first.status == "awaiting_approval", first
    return model, sid, first


@pytest.mark.parametrize("run_async", [False, True], ids=["sync", "async"])
async def test_cancel_right_after_approval_keeps_the_payment_that_happened(
    loop_worker, scripted_llm, temporal_env, run_async
):
    """An approved call's started body is waited for, async too: a cancel would otherwise
    interrupt an async payment halfway and record it as cancelled."""
    payments = SlowPayments(run_async=run_async)
    steps = [reply.tool_call("pay", PAY, "c1"), reply.text("not reached")]
    async with loop_worker(payments.registry()) as w:
        model, sid, first = await parked(w, scripted_llm, temporal_env, steps)
        await w.sessions.confirm_tool_call(sid, "c1", "alice")
        deadline = time.monotonic() + 15
        while payments.started == 0 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        result = await w.sessions.cancel(sid, first.message_id, reason="changed my mind")
        stored = await w.store.read(sid)
    assert result.status == "cancelled", result
    assert result.error is not None and result.error.code == ErrorCode.MESSAGE_CANCELLED
    [outcome] = result.tool_calls
    assert (outcome.call_id, outcome.ok, outcome.executed) == ("c1", True, True), outcome
    assert (payments.started, payments.paid) == (1, 1)
    [tool] = [m for m in stored if m.message.role == "tool"]
    envelope = tool.message.envelope
    assert envelope is not None and envelope.ok and envelope.data == "paid 250 to acme"
    assert ErrorCode.TOOL_CALL_CANCELLED not in envelope.error_codes
    assert len(scripted_llm.requests(model)) == 1  # cancelled: no new turn after the call


async def test_a_message_parked_on_held_calls_can_be_cancelled(
    loop_worker, scripted_llm, temporal_env
):
    payments = SlowPayments()
    steps = [reply.tool_call("pay", PAY, "c1"), reply.text("Not paid."), reply.text("ok")]
    async with loop_worker(payments.registry()) as w:
        model, sid, first = await parked(w, scripted_llm, temporal_env, steps)
        result = await w.sessions.cancel(sid)  # no message id: the parked one
        listing = await w.sessions.tool_approvals(sid)
        after = await w.sessions.send(sid, "and now?")
        stored = await w.store.read(sid)
    assert result.message_id == first.message_id
    assert (result.status, result.pending_approvals) == ("cancelled", []), result
    [outcome] = result.tool_calls
    assert (outcome.ok, outcome.executed, outcome.error_codes) == (
        False,
        False,
        [ErrorCode.TOOL_CALL_CANCELLED],
    )
    assert listing.pending == []
    assert payments.started == 0
    [tool] = [m for m in stored if m.message.role == "tool"]
    assert tool.message.envelope is not None
    assert tool.message.envelope.error_codes == [ErrorCode.TOOL_CALL_CANCELLED]
    [envelope] = tool_envelopes(scripted_llm.requests(model)[1])
    assert envelope["ok"] is False
    assert after.status == "completed"


async def test_cancel_naming_a_parked_message_is_accepted(loop_worker, scripted_llm, temporal_env):
    payments = SlowPayments()
    steps = [reply.tool_call("pay", PAY, "c1"), reply.text("fine")]
    async with loop_worker(payments.registry()) as w:
        _, sid, first = await parked(w, scripted_llm, temporal_env, steps)
        result = await w.sessions.cancel(sid, first.message_id)
        again = await w.sessions.tool_approvals(sid)
    assert result.status == "cancelled"
    assert [t.error_codes for t in result.tool_calls] == [[ErrorCode.TOOL_CALL_CANCELLED]]
    assert again.pending == [] and payments.started == 0
