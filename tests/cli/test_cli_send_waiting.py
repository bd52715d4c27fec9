"""`durable-loop send` while the session waits for a person: the parent of a sub-agent
that holds a call answers awaiting_approval with the child's call, and a message queued
behind held calls says so (what waits, and what to do), never "is a worker polling?"."""

from __future__ import annotations

from durable_loop.core.sub_agents import child_session_id
from durable_loop.testing import reply
from tests.cli.test_cli_proposals import invoke
from tests.conftest import settings_for, unique
from tests.workflows.approval_kit import Payments, approval_settings
from tests.workflows.test_sub_agents import TASK, registry_with, researcher

PAY = {"amount": 250, "to": "acme"}


def error_line(result) -> str:
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    [line] = [x for x in result.stderr.splitlines() if x.startswith("error: ")]
    assert line.startswith("error: NO_REPLY: no reply within 3s: "), line
    assert "is a worker polling" not in line and "Traceback" not in result.output
    return line


async def test_a_message_queued_behind_held_calls_says_what_waits(
    loop_worker, scripted_llm, temporal_env
):
    payments = Payments()
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model,
        [
            reply.tool_calls(("pay", PAY, "c1"), ("pay", {"amount": 9, "to": "bob"}, "c2")),
            reply.text("Paid one."),
            reply.text("Here is another answer."),
        ],
    )
    async with loop_worker(payments.registry()) as w:
        await w.sessions.start(sid, approval_settings(scripted_llm, model, temporal_env))
        parked = await invoke(temporal_env, "send", sid, "pay both", "--task-queue", w.task_queue)
        queued = await invoke(
            temporal_env, "send", sid, "another question", "--message-id", "q2",
            "--timeout", "3", "--task-queue", w.task_queue,
        )  # fmt: skip
        for call_id in ("c1", "c2"):
            await w.sessions.reject_tool_call(sid, call_id, "bob")
        answered = await w.sessions.message_result(sid, "q2")
    assert parked.exit_code == 0 and "status awaiting_approval" in parked.stderr
    line = error_line(queued)
    assert f"session {sid} waits for a person: 2 held tool call(s): pay [c1], pay [c2]" in line
    assert "; message q2 is queued behind them and runs once they are decided" in line
    assert f"`durable-loop pending {sid}`" in line
    assert f"`durable-loop result {sid} q2`" in line
    notice = f"waiting: session {sid} waits for a person: 2 held tool call(s): pay [c1], pay [c2]; "
    assert notice + "message q2 is queued behind them; still waiting up to 3s" in queued.stderr
    assert answered.reply == "Here is another answer."


async def test_a_sub_agents_held_call_is_the_parents_awaiting_approval(
    loop_worker, scripted_llm, temporal_env
):
    parent_model, child_model = unique("p"), unique("c")
    payments = Payments()
    config = researcher(scripted_llm, child_model, tools=["pay"])
    scripted_llm.script(
        parent_model,
        [reply.tool_call("researcher", TASK, "r1"), reply.text("all paid"), reply.text("next")],
    )
    scripted_llm.script(
        child_model, [reply.tool_call("pay", {"amount": 5, "to": "acme"}, "c1"), reply.text("paid")]
    )
    async with loop_worker(registry_with(config, tools=payments.registry())) as w:
        sid = unique("s")
        child = child_session_id(sid, "r1", 2)
        await w.sessions.start(sid, settings_for(scripted_llm, parent_model))
        queue = ["--task-queue", w.task_queue]
        sent = await invoke(temporal_env, "send", sid, "pay acme", "--message-id", "m1", *queue)
        queued = await invoke(
            temporal_env, "send", sid, "and then?", "--message-id", "m2", "--timeout", "3",
            *queue,
        )  # fmt: skip
        await w.sessions.confirm_tool_call(sid, "c1", "alice")
        first = await w.sessions.message_result(sid, "m1")
        second = await w.sessions.message_result(sid, "m2")
    assert sent.exit_code == 0, sent.output
    assert "status awaiting_approval" in sent.stderr
    assert f"waits for approval: pay [c1] in sub-agent session {child}" in sent.stderr
    line = error_line(queued)
    assert f"waits for a person: 1 held tool call(s): pay [c1] in sub-agent {child}" in line
    assert "; message m2 is queued behind them" in line
    assert (first.reply, second.reply) == ("all paid", "next")
    assert [(amount, to) for amount, to, _ in payments.made] == [(5, "acme")]
