"""Sub-agents in the trace: the child's tokens are in the parent's total (as in the
parent's results), the call ran (it is not "not run"), and it shows how the child's task
stands: running, waiting for a person (and on which calls), completed."""

from __future__ import annotations

import asyncio

from durable_loop.client.trace.entries import ToolCallDecisionEntry
from durable_loop.client.trace.fetch import load_trace
from durable_loop.core.approvals import UPDATE_DECIDE_TOOL_CALL, ToolCallDecided
from durable_loop.core.sub_agents import child_session_id
from durable_loop.testing import reply
from tests.client.trace.kit import rendered
from tests.conftest import settings_for, unique
from tests.workflows.approval_kit import Payments
from tests.workflows.test_session import wait_until
from tests.workflows.test_sub_agents import TASK, registry_with, researcher


async def test_the_child_counts_in_the_total_and_shows_its_status(
    loop_worker, scripted_llm, store_url
):
    parent_model, child_model = unique("p"), unique("c")
    scripted_llm.script(
        parent_model, [reply.tool_call("researcher", TASK, "r1"), reply.text("It is Paris.")]
    )
    scripted_llm.script(child_model, [reply.text("Paris")])
    async with loop_worker(registry_with(researcher(scripted_llm, child_model))) as w:
        sid = unique("s")
        child = child_session_id(sid, "r1", 2)
        await w.sessions.start(sid, settings_for(scripted_llm, parent_model))
        result = await w.sessions.send(sid, "What is the capital of France?")
        trace = await load_trace(w.sessions.client, sid, db_url=store_url)
        child_trace = await load_trace(w.sessions.client, child, db_url=store_url)

    # two parent turns and one child turn, 15 tokens each
    assert result.usage.total_tokens == trace.usage.total_tokens == 45
    assert trace.sub_agent_usage.total_tokens == 15
    [message] = trace.by_message
    assert message.usage == result.usage
    [call] = trace.turns[0].calls
    assert (call.call_id, call.ok, call.executed, call.sub_agent_session) == (
        "r1",
        True,
        True,
        child,
    )
    assert (call.sub_agent_status, call.sub_agent_error) == ("completed", None)
    assert call.sub_agent_usage is not None and call.sub_agent_usage.total_tokens == 15
    text = rendered(trace)
    assert "researcher r1 ok" in text and "(not run)" not in text
    assert f"sub-agent session {child}: completed · 15 tokens" in text
    assert "tokens: 45 (30 in / 15 out; 15 of them by sub-agents)" in text

    # the child's own trace: its one message (the task) with its status and reply
    [task] = child_trace.by_message
    assert (task.message_id, task.user_text, task.status) == ("r1", TASK["task"], "completed")
    assert task.reply is not None and task.reply.text == "Paris"
    child_text = rendered(child_trace)
    assert "message 1 · completed · r1" in child_text
    assert "messages: 1 (1 completed, 0 failed)" in child_text


async def test_a_child_holding_a_call_shows_it_and_the_decision_names_the_child(
    loop_worker, scripted_llm, store_url
):
    parent_model, child_model = unique("p"), unique("c")
    payments = Payments()
    config = researcher(scripted_llm, child_model, tools=["pay"])
    async with loop_worker(registry_with(config, tools=payments.registry())) as w:
        sid = unique("s")
        child = child_session_id(sid, "r1", 2)
        scripted_llm.script(
            parent_model, [reply.tool_call("researcher", TASK, "r1"), reply.text("all paid")]
        )
        pay = reply.tool_call("pay", {"amount": 5, "to": "acme"}, "c1")
        scripted_llm.script(child_model, [pay, reply.text("paid")])
        await w.sessions.start(sid, settings_for(scripted_llm, parent_model))
        sent = asyncio.create_task(w.sessions.send(sid, "pay acme", wait_for_approval=True))
        parent = w.sessions.handle(sid)

        async def held_in_child() -> list:
            return (await w.sessions.tool_approvals(sid)).pending

        [held] = await wait_until(held_in_child)
        waiting = await load_trace(w.sessions.client, sid, db_url=store_url)
        await parent.execute_update(
            UPDATE_DECIDE_TOOL_CALL, held.decision("confirm", "alice"), result_type=ToolCallDecided
        )
        result = await sent
        done = await load_trace(w.sessions.client, sid, db_url=store_url)

    [call] = waiting.turns[0].calls
    assert (call.sub_agent_session, call.sub_agent_status, call.sub_agent_held) == (
        child,
        "awaiting_approval",
        ["c1"],
    )
    assert call.executed and call.ok is None and call.sub_agent_usage is None
    text = rendered(waiting)
    assert "researcher r1 running" in text
    assert f"sub-agent session {child}: awaiting approval · holds c1" in text

    assert result.status == "completed" and payments.made
    [decision] = done.entries
    assert isinstance(decision, ToolCallDecisionEntry)
    assert (decision.via, decision.call_id, decision.outcome, decision.by) == (
        "update",
        "c1",
        "approved",
        "alice",
    )
    assert (decision.sub_agent_session, decision.message, decision.after_turn) == (child, 0, 1)
    [call] = done.turns[0].calls
    assert (call.sub_agent_status, call.sub_agent_held, call.ok) == ("completed", [], True)
    # the parent's two turns and the child's two
    assert done.usage.total_tokens == result.usage.total_tokens == 60
    assert f"alice approved pay c1 (sub-agent session {child})" in rendered(done)
