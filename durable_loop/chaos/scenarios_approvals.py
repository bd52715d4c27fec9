"""Scenarios around a tool call a person approved: the worker dies between the decision
and the tool run, or after the tool ran but before its result was recorded. Either way
the approved transfer runs once (its idempotency key reaches the tool)."""

from __future__ import annotations

import time

from pydantic import JsonValue

from durable_loop.chaos.rig import ChaosRig, eventually, through_outages
from durable_loop.chaos.scenario import Tracker, scenario
from durable_loop.core.approvals import ApprovalSettings, ToolCallDecision
from durable_loop.core.config import SessionSettings
from durable_loop.testing import reply

HOLD_S = 30.0
APPROVER = "chaos-approver"


def gated(settings: SessionSettings) -> SessionSettings:
    return settings.model_copy(update={"approvals": ApprovalSettings(tools=["transfer"])})


async def held_transfer(
    rig: ChaosRig, t: Tracker, label: str, arguments: dict[str, JsonValue], answer: str
) -> tuple[str, str]:
    """A session whose transfer call waits for approval; (session id, message id)."""
    sid, model = rig.new_session(label)
    t.session(sid)
    rig.llm.script(model, [reply.tool_call("transfer", arguments, "call_pay"), reply.text(answer)])
    first = await rig.sessions.start_and_send(
        sid, gated(rig.settings(model)), "pay", message_id="m1"
    )
    t.expect(first.status == "awaiting_approval", f"held: {first.status}")
    t.expect(rig.ledger.effects(sid) == 0, "nothing ran before the approval")
    return sid, first.message_id


@scenario(
    "approved_call_worker_killed_before_run",
    "a person approves a held transfer while the worker is dead; it runs once on return",
)
async def approved_call_worker_killed_before_run(rig: ChaosRig, t: Tracker) -> None:
    sid, message_id = await held_transfer(rig, t, "approve-down", {"amount": 4}, "paid 4")
    [pending] = (await rig.sessions.tool_approvals(sid)).pending
    await rig.kill_worker()
    t.fault("worker SIGKILL between the approval and the tool run")
    decision = ToolCallDecision(
        call_id=pending.call_id,
        verdict="confirm",
        approver=APPROVER,
        fingerprint=pending.fingerprint,
        session_id=sid,
    )
    await rig.sessions.tool_calls.signal(sid, decision)
    await rig.start_worker()
    result = await rig.sessions.message_result(sid, message_id)
    t.ended(sid, result, reply="paid 4")
    t.expect(rig.ledger.effects(sid) == 1, "the approved transfer ran once")


@scenario(
    "approved_call_worker_killed_after_tool",
    "the worker dies after an approved transfer applied its effect, before the result was "
    "recorded; the retry finds the effect applied",
)
async def approved_call_worker_killed_after_tool(rig: ChaosRig, t: Tracker) -> None:
    sid, message_id = await held_transfer(
        rig, t, "approve-kill", {"amount": 6, "hold_s": HOLD_S}, "paid 6"
    )
    await rig.sessions.confirm_tool_call(sid, "call_pay", APPROVER)
    await rig.wait_for_invocation(sid, "transfer")

    async def applied() -> bool:
        return rig.ledger.effects(sid) == 1

    await eventually(applied)
    await rig.kill_worker()
    killed = time.monotonic()
    t.fault("worker SIGKILL after an approved tool ran, before its result was recorded")
    await rig.start_worker()
    result = await rig.sessions.message_result(sid, message_id)
    t.result.details["kill_to_reply_s"] = round(time.monotonic() - killed, 1)
    t.ended(sid, result, reply="paid 6")
    attempts = rig.ledger.invocations(sid, "transfer")
    t.expect(attempts[:2] == [1, 2], f"the tool was re-invoked after the kill: {attempts}")
    t.expect(rig.ledger.effects(sid) == 1, "the approved transfer's effect was applied once")
    t.result.details["transfer_attempts"] = attempts  # type: ignore[assignment]


@scenario(
    "approval_survives_server_restart",
    "SIGKILL the dev server while a transfer waits for approval, restart it on its SQLite "
    "file; the approval after the restart runs the transfer once",
)
async def approval_survives_server_restart(rig: ChaosRig, t: Tracker) -> None:
    sid, message_id = await held_transfer(rig, t, "approve-restart", {"amount": 8}, "paid 8")
    await rig.restart_server(hard=True)
    t.fault("dev server SIGKILL + restart while a call waits for approval")
    sessions = rig.sessions
    listing = await through_outages(lambda: sessions.tool_approvals(sid))
    t.expect([p.call_id for p in listing.pending] == ["call_pay"], "the held call survived")
    await through_outages(lambda: sessions.confirm_tool_call(sid, "call_pay", APPROVER))
    result = await through_outages(lambda: sessions.message_result(sid, message_id))
    t.ended(sid, result, reply="paid 8")
    t.expect(rig.ledger.effects(sid) == 1, "the approved transfer ran once")
