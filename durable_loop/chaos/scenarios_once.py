"""Scenarios around tools declared ``effect="once"`` that cannot take an idempotency key:
the worker dies inside the body. The body never runs twice without someone saying so:
with a ``reconcile`` the check settles it; without one, or when the check keeps failing,
the call is in doubt and held for a person, whose answer settles it ("happened": their
text is the result; "run_again": it runs once more; "give_up")."""

from __future__ import annotations

import asyncio

from pydantic import JsonValue

from durable_loop.chaos.rig import ChaosRig
from durable_loop.chaos.scenario import Tracker, scenario
from durable_loop.core.approval_models import InDoubtAnswer
from durable_loop.core.errors import ErrorCode
from durable_loop.core.results import RunResult
from durable_loop.testing import reply

HOLD_S = 30.0


async def killed_in_body(
    rig: ChaosRig,
    t: Tracker,
    label: str,
    tool: str,
    arguments: dict[str, JsonValue],
    kills: int,
    answer: InDoubtAnswer | None = None,
) -> tuple[str, RunResult]:
    """A session whose one call of ``tool`` has its worker SIGKILLed ``kills`` times inside
    the body (each after the attempt's invocation is recorded, and with ``hold_s`` after
    its effect); the message's result, after
    a person gave ``answer`` to the call if it came back in doubt."""
    sid, model = rig.new_session(label)
    t.session(sid)
    rig.llm.script(model, [reply.tool_call(tool, arguments, "call_once"), reply.text("told")])
    sending = asyncio.create_task(
        rig.sessions.start_and_send(sid, rig.settings(model), "send it", message_id="m1")
    )
    for kill in range(1, kills + 1):
        await rig.wait_for_invocation(sid, tool, count=kill)
        if arguments.get("hold_s"):
            # the kill is meant to land after the effect: the invocation is recorded before
            await rig.wait_for_effects(sid, count=kill)
        await rig.kill_worker()
        t.fault(f"worker SIGKILL inside an effect='once' body (kill {kill} of {kills})")
        await rig.start_worker()
    result = await asyncio.wait_for(sending, 180)
    in_doubt = [p for p in result.pending_approvals if p.kind == "in_doubt"]
    t.result.details["in_doubt_raised"] = len(in_doubt)
    if in_doubt and answer is not None:
        for held in in_doubt:
            text = "the message went out" if answer == "happened" else None
            await rig.sessions.decide_tool_call(
                sid, held.decision(answer, "chaos-operator", result=text)
            )
        t.result.details["settled_by_person"] = answer
        result = await asyncio.wait_for(rig.sessions.message_result(sid, "m1"), 180)
    t.ended(sid, result, reply="told")
    runs = await asyncio.to_thread(rig.ledger.invocations, sid, tool)
    t.result.details[f"{tool}_attempts"] = runs  # type: ignore[assignment]
    return sid, result


def call_codes(result: RunResult) -> list[str]:
    return [code for call in result.tool_calls for code in call.error_codes]


@scenario(
    "once_call_worker_killed_in_body",
    "SIGKILL the worker inside a keyless effect='once' tool after its message went out; "
    "the call is in doubt, a person answers 'it happened', and the message is never sent "
    "twice",
)
async def once_call_worker_killed_in_body(rig: ChaosRig, t: Tracker) -> None:
    sid, result = await killed_in_body(
        rig, t, "once-doubt", "notify", {"text": "hi", "hold_s": HOLD_S}, kills=1, answer="happened"
    )
    t.expect(t.result.details.get("in_doubt_raised") == 1, "the call was put to a person")
    t.expect(call_codes(result) == [], f"the person's answer is the result: {call_codes(result)}")
    t.expect(rig.ledger.invocations(sid, "notify") == [1], "the body ran once, never again")
    t.expect(rig.ledger.effects(sid) == 1, "the message went out once")


@scenario(
    "once_call_reconciled_after_kill",
    "SIGKILL the worker inside an effect='once' tool with a reconcile check, after its "
    "message went out; the check finds it and the call ends ok without running again",
)
async def once_call_reconciled_after_kill(rig: ChaosRig, t: Tracker) -> None:
    sid, result = await killed_in_body(
        rig, t, "once-found", "notify_checked", {"text": "hi", "hold_s": HOLD_S}, kills=1
    )
    t.expect(call_codes(result) == [], f"the call ended ok: {call_codes(result)}")
    t.expect(rig.ledger.invocations(sid, "notify_checked") == [1], "the body ran once")
    t.expect(rig.ledger.effects(sid) == 1, "the message went out once")


@scenario(
    "once_call_killed_three_times_before_its_effect",
    "SIGKILL the worker three times in a row inside an effect='once' tool, each before its "
    "message went out; each time the check says it did not happen, and it goes out once",
)
async def once_call_killed_three_times(rig: ChaosRig, t: Tracker) -> None:
    arguments: dict[str, JsonValue] = {"text": "hi", "hold_before_s": 8.0}
    sid, result = await killed_in_body(rig, t, "once-thrice", "notify_checked", arguments, kills=3)
    t.expect(call_codes(result) == [], f"the call ended ok: {call_codes(result)}")
    runs = rig.ledger.invocations(sid, "notify_checked")
    t.expect(len(runs) == 4, f"three killed runs and the one that finished: {runs}")
    t.expect(rig.ledger.effects(sid) == 1, "the message went out once")


@scenario(
    "once_call_reconcile_fails",
    "SIGKILL the worker inside an effect='once' tool whose reconcile check itself fails on "
    "every attempt; the call is in doubt, never run again until a person answers 'give up'",
)
async def once_call_reconcile_fails(rig: ChaosRig, t: Tracker) -> None:
    arguments: dict[str, JsonValue] = {"text": "hi", "hold_s": HOLD_S, "check": "broken"}
    sid, result = await killed_in_body(
        rig, t, "once-broken", "notify_checked", arguments, kills=1, answer="give_up"
    )
    t.expect(t.result.details.get("in_doubt_raised") == 1, "the call was put to a person")
    t.expect(call_codes(result) == [ErrorCode.TOOL_CALL_REJECTED], f"{call_codes(result)}")
    t.expect(rig.ledger.invocations(sid, "notify_checked") == [1], "the body ran once")
    t.expect(rig.ledger.effects(sid) == 1, "the message went out once")


@scenario(
    "once_call_run_again_after_kill",
    "SIGKILL the worker inside an effect='once' tool before its message went out, with a "
    "reconcile check that fails; the call is in doubt, a person answers 'run it again', "
    "and the message goes out once",
)
async def once_call_run_again_after_kill(rig: ChaosRig, t: Tracker) -> None:
    arguments: dict[str, JsonValue] = {"text": "hi", "hold_before_s": 8.0, "check": "broken"}
    sid, result = await killed_in_body(
        rig, t, "once-again", "notify_checked", arguments, kills=1, answer="run_again"
    )
    t.expect(t.result.details.get("in_doubt_raised") == 1, "the call was put to a person")
    t.expect(call_codes(result) == [], f"the call ran again and ended ok: {call_codes(result)}")
    runs = rig.ledger.invocations(sid, "notify_checked")
    t.expect(len(runs) == 2, f"the killed run and the one the person allowed: {runs}")
    t.expect(rig.ledger.effects(sid) == 1, "the message went out once")
