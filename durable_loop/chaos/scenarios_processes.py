"""Scenarios that break processes: the worker (SIGKILL mid-call, down while messages
arrive) and the Temporal server (killed and restarted on its SQLite file)."""

from __future__ import annotations

import asyncio
import time

from durable_loop.chaos.rig import ChaosRig, Gate, eventually, through_outages
from durable_loop.chaos.scenario import Tracker, scenario
from durable_loop.testing import RecordedRequest, Reply, reply

HOLD_S = 30.0
"""How long a held request or tool waits: far longer than the fault takes to inject."""
DOWN_S = 3.0


class PayThenAnswer:
    """A scripted model decided by the conversation, not by a queue: two attempts of the
    same LLM turn (a retry racing the attempt a fault cut off) both get a transfer call."""

    def __init__(self, amount: int, answer: str) -> None:
        self.call = reply.tool_call("transfer", {"amount": amount}, "call_pay")
        self.answer = reply.text(answer)

    def __call__(self, request: RecordedRequest) -> Reply:
        last = request.messages[-1] if request.messages else {}
        return self.answer if last.get("role") == "tool" else self.call


@scenario("kill_worker_mid_llm", "SIGKILL the worker while its LLM request is in flight")
async def kill_worker_mid_llm(rig: ChaosRig, t: Tracker) -> None:
    sid, model = rig.new_session("kill-llm")
    t.session(sid)
    script = PayThenAnswer(5, "paid 5")
    gate = Gate(script.call, HOLD_S)
    rig.llm.script(model, [gate], then=script)
    sending = asyncio.create_task(
        rig.sessions.start_and_send(sid, rig.settings(model), "pay 5", message_id="m1")
    )
    await gate.wait()
    await rig.kill_worker()
    killed = time.monotonic()
    t.fault("worker SIGKILL during an LLM call")
    await rig.start_worker()
    t.result.details["worker_restart_s"] = round(time.monotonic() - killed, 1)
    result = await asyncio.wait_for(sending, 120)
    t.result.details["kill_to_reply_s"] = round(time.monotonic() - killed, 1)
    t.ended(sid, result, reply="paid 5")
    t.expect([c.ok for c in result.tool_calls] == [True], f"tool calls: {result.tool_calls}")
    t.expect(len(rig.llm.requests(model)) >= 3, "the cut-off LLM call was retried")
    t.expect(rig.ledger.effects(sid) == 1, "the transfer ran once")
    t.result.details["llm_requests"] = len(rig.llm.requests(model))


@scenario("kill_worker_mid_tool", "SIGKILL the worker inside a side-effecting tool")
async def kill_worker_mid_tool(rig: ChaosRig, t: Tracker) -> None:
    sid, model = rig.new_session("kill-tool")
    t.session(sid)
    call = reply.tool_call("transfer", {"amount": 7, "hold_s": HOLD_S}, "call_pay")
    rig.llm.script(model, [call, reply.text("paid 7")])
    sending = asyncio.create_task(
        rig.sessions.start_and_send(sid, rig.settings(model), "pay 7", message_id="m1")
    )
    await rig.wait_for_invocation(sid, "transfer")
    await rig.kill_worker()
    killed = time.monotonic()
    t.fault("worker SIGKILL inside a side-effecting tool")
    await rig.start_worker()
    t.result.details["worker_restart_s"] = round(time.monotonic() - killed, 1)
    result = await asyncio.wait_for(sending, 120)
    t.result.details["kill_to_reply_s"] = round(time.monotonic() - killed, 1)
    t.ended(sid, result, reply="paid 7")
    attempts = await asyncio.to_thread(rig.ledger.invocations, sid, "transfer")
    t.expect(attempts[:2] == [1, 2], f"the tool was re-invoked after the kill: {attempts}")
    t.expect(rig.ledger.effects(sid) == 1, "its side effect was applied once")
    t.result.details["transfer_attempts"] = attempts  # type: ignore[assignment]


@scenario(
    "message_while_worker_down",
    "Signal, Update and update-with-start sent while no worker runs are processed on return",
)
async def message_while_worker_down(rig: ChaosRig, t: Tracker) -> None:
    sid_a, model_a = rig.new_session("down-a")
    sid_b, model_b = rig.new_session("down-b")
    t.session(sid_a)
    t.session(sid_b)
    rig.llm.script(model_a, [reply.text("first"), reply.text("second"), reply.text("third")])
    rig.llm.script(model_b, [reply.text("welcome")])
    sessions = rig.sessions
    first = await sessions.start_and_send(sid_a, rig.settings(model_a), "hello", message_id="a1")
    t.expect(first.reply == "first", f"first reply: {first.reply!r}")
    await rig.kill_worker()
    t.fault("worker down while messages arrive")
    await sessions.post(sid_a, "are you there?", message_id="a2")
    update = asyncio.create_task(sessions.send(sid_a, "still?", message_id="a3"))
    with_start = asyncio.create_task(
        sessions.start_and_send(sid_b, rig.settings(model_b), "hi", message_id="b1")
    )
    await asyncio.sleep(DOWN_S)
    t.expect(not update.done() and not with_start.done(), "nothing ran without a worker")
    t.expect(len(rig.llm.requests(model_a)) == 1, "no LLM call without a worker")
    await rig.start_worker()
    third = await asyncio.wait_for(update, 120)
    welcome = await asyncio.wait_for(with_start, 120)
    t.ended(sid_b, welcome, reply="welcome")

    async def both_done() -> bool:
        return (await sessions.status(sid_a)).messages_done == 3

    await eventually(both_done, 60)
    replies = [m.preview for m in (await sessions.tail(sid_a)).entries if m.role == "assistant"]
    t.survived(
        sid_a,
        third.status == "completed" and replies == ["first", "second", "third"],
        f"replies in order after the worker returned: {replies}",
    )


@scenario(
    "server_restart_mid_session",
    "SIGKILL the dev server during an LLM call, restart it on its SQLite file; "
    "then a graceful restart between messages",
)
async def server_restart_mid_session(rig: ChaosRig, t: Tracker) -> None:
    sid, model = rig.new_session("server")
    t.session(sid)
    script = PayThenAnswer(3, "paid 3")
    gate = Gate(script.call, 4.0)
    rig.llm.script(model, [gate], then=script)
    settings = rig.settings(model)
    sessions = rig.sessions
    sending = asyncio.create_task(
        through_outages(lambda: sessions.start_and_send(sid, settings, "pay 3", message_id="s1"))
    )
    await gate.wait()
    await rig.restart_server(hard=True)
    t.fault("dev server SIGKILL + restart during an LLM call")
    first = await asyncio.wait_for(sending, 120)
    await rig.restart_server(hard=False)
    t.fault("dev server graceful restart between messages")
    second = await through_outages(lambda: sessions.send(sid, "pay 3 again", message_id="s2"))
    t.survived(
        sid,
        first.reply == "paid 3" and second.reply == "paid 3",
        f"replies {first.reply!r}, {second.reply!r}",
    )
    t.result.details["llm_requests"] = len(rig.llm.requests(model))
    t.expect(rig.ledger.effects(sid) == 2, "one transfer per message")


@scenario(
    "facts_need_confirmation",
    "a proposal survives a worker kill, facts change only on confirm, a reject changes nothing",
)
async def facts_need_confirmation(rig: ChaosRig, t: Tracker) -> None:
    sid, model = rig.new_session("facts")
    t.session(sid)
    budget = {"changes": [{"op": "add", "path": "/budget", "value": 100}], "summary": "budget"}
    owner = {"changes": [{"op": "add", "path": "/owner", "value": "eve"}], "summary": "owner"}
    rig.llm.script(
        model,
        [
            reply.tool_call("facts_propose", budget, "call_p1"),
            reply.text("proposed the budget"),
            reply.tool_call("facts_propose", owner, "call_p2"),
            reply.text("proposed the owner"),
        ],
    )
    sessions = rig.sessions
    await sessions.start_and_send(sid, rig.settings(model), "set a budget", message_id="f1")
    pending = await sessions.pending_proposals(sid)
    t.expect(len(pending) == 1, f"one pending proposal: {pending}")
    await rig.kill_worker()
    t.fault("worker SIGKILL while a proposal waits")
    snapshot = await rig.workspace.snapshot(sid)
    t.expect(snapshot.facts == {} and snapshot.facts_version == 0, "no fact before a decision")
    await rig.start_worker()
    committed = await sessions.confirm(sid, pending[0].proposal_id, "chaos-approver")
    t.expect(committed.status == "committed", f"confirm: {committed.status}")
    await sessions.send(sid, "and an owner", message_id="f2")
    second = await sessions.pending_proposals(sid)
    t.expect(len(second) == 1, f"the second proposal is pending: {second}")
    if second:
        rejected = await sessions.reject(sid, second[0].proposal_id, "chaos-approver")
        t.expect(rejected.status == "rejected", f"reject: {rejected.status}")
    final = await rig.workspace.snapshot(sid)
    t.survived(
        sid,
        final.facts == {"budget": 100} and final.facts_version == 1,
        f"facts after confirm + reject: {final.facts} (version {final.facts_version})",
    )
