"""Several workers on one task queue, one of them SIGKILLed under load: the sessions it
held continue on the others, and the histories say how long they waited."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime

from durable_loop.chaos.handover import session_handover, summarize
from durable_loop.chaos.rig import ChaosRig, eventually
from durable_loop.chaos.scenario import Tracker, scenario
from durable_loop.chaos.scenarios_processes import PayThenAnswer
from durable_loop.client.history import fetch_histories
from durable_loop.core import names
from durable_loop.core.contracts import RunResult
from durable_loop.testing import reply

WORKERS = 3
LLM_DELAY_S = 0.5
"""Each scripted LLM reply takes this long, so a kill finds calls in flight."""
TOOL_HOLD_S = 0.5
"""The transfer holds its worker this long after applying its effect: a kill in that
window makes the retry find the effect already applied."""
KILL_AFTER = 1 / 3
"""The kill comes once this share of the sessions has invoked its tool."""


def paced(amount: int) -> PayThenAnswer:
    """Pay ``amount`` then say so, each LLM reply taking :data:`LLM_DELAY_S`."""
    script = PayThenAnswer(amount, f"paid {amount}")
    call = reply.tool_call("transfer", {"amount": amount, "hold_s": TOOL_HOLD_S}, "call_pay")
    script.call = reply.slow(call, LLM_DELAY_S)
    script.answer = reply.slow(script.answer, LLM_DELAY_S)
    return script


@scenario(
    "many_workers_kill",
    f"{WORKERS} workers share the load, one is SIGKILLed mid-load; the others finish its sessions",
)
async def many_workers_kill(rig: ChaosRig, t: Tracker) -> None:
    count = rig.load_sessions
    peers = await rig.start_peers(WORKERS - 1)
    victim = peers[0]
    sessions = rig.sessions
    pairs = [rig.new_session("load") for _ in range(count)]
    ids = [t.session(sid) for sid, _ in pairs]
    for index, (_, model) in enumerate(pairs):
        rig.llm.script(model, [], then=paced(index + 1))

    errors: list[str] = []

    async def send(index: int, sid: str, model: str) -> RunResult | None:
        try:
            return await sessions.start_and_send(
                sid, rig.settings(model), f"pay {index + 1}", message_id=f"{sid}-m1"
            )
        except Exception as err:  # a caller-visible error is exactly what we count
            errors.append(f"{sid}: {type(err).__name__}: {err}")
            return None

    started = time.monotonic()
    sending = [asyncio.create_task(send(i, sid, model)) for i, (sid, model) in enumerate(pairs)]

    async def loaded() -> bool:
        counts = await asyncio.to_thread(rig.ledger.counts, ids)
        return counts.invocations >= max(1, int(count * KILL_AFTER))

    await eventually(loaded, 180)
    killed_at = datetime.now(UTC)
    victim_pid = victim.pid
    await asyncio.to_thread(victim.kill)
    t.fault("one of three workers SIGKILLed mid-load")
    results = await asyncio.gather(*sending)
    wall_s = time.monotonic() - started
    await rig.stop_peers()

    for index, (sid, result) in enumerate(zip(ids, results, strict=True)):
        if result is not None:
            t.ended(sid, result, reply=f"paid {index + 1}")
    t.expect(not errors, f"callers saw errors: {errors[:5]}")
    lost = [sid for sid, result in zip(ids, results, strict=True) if result is None]
    effects = await asyncio.to_thread(rig.ledger.counts, ids)
    t.expect(effects.effects == count, f"{effects.effects} transfers for {count} sessions")

    handovers = [
        session_handover(
            sid,
            await fetch_histories(rig.client, names.session_workflow_id(sid)),
            victim_pid,
            killed_at,
        )
        for sid in ids
    ]
    handover = summarize(handovers)
    t.expect(handover.held_sessions > 0, "the killed worker held sessions")
    t.expect(
        all(h.wait_s is not None for h in handovers if h.held),
        "every session the killed worker held continued on another worker",
    )
    t.result.details.update(
        workers=WORKERS,
        sticky_timeout_s=rig.sticky_timeout_s,
        sessions=count,
        lost_messages=len(lost),
        caller_errors=len(errors),
        turns_per_s=round(2 * count / wall_s, 2),
        handover=handover.model_dump(),
    )
