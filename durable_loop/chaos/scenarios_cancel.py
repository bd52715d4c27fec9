"""A scenario that kills the worker while a message is being cancelled."""

from __future__ import annotations

import asyncio

from durable_loop.chaos.rig import ChaosRig, Gate, eventually
from durable_loop.chaos.scenario import Tracker, scenario
from durable_loop.core import names
from durable_loop.testing import reply
from durable_loop.testing.history import EventType, events_of

HOLD_S = 30.0


@scenario(
    "kill_worker_during_cancel",
    "SIGKILL the worker after a cancel_message was accepted, before the LLM call stopped",
)
async def kill_worker_during_cancel(rig: ChaosRig, t: Tracker) -> None:
    sid, model = rig.new_session("cancel")
    t.session(sid)
    gate = Gate(reply.text("too late"), HOLD_S)
    rig.llm.script(model, [gate], then=reply.text("after the cancel"))
    sessions = rig.sessions
    sending = asyncio.create_task(
        sessions.start_and_send(sid, rig.settings(model), "a long essay", message_id="c1")
    )
    await gate.wait()
    cancelling = asyncio.create_task(sessions.cancel(sid, "c1", reason="chaos"))
    handle = rig.client.get_workflow_handle(names.session_workflow_id(sid))

    async def cancel_requested() -> bool:
        history = await handle.fetch_history()
        return bool(events_of(history, EventType.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED))

    await eventually(cancel_requested, 30)
    await rig.kill_worker()
    t.fault("worker SIGKILL during a cancellation")
    await rig.start_worker()
    cancelled = await asyncio.wait_for(cancelling, 120)
    sent = await asyncio.wait_for(sending, 120)
    t.expect(cancelled.status == "cancelled", f"cancel answered {cancelled.status}")
    t.expect(sent == cancelled, "the sender got the cancelled result too")
    after = await sessions.send(sid, "something short", message_id="c2")
    t.ended(sid, after, reply="after the cancel")
