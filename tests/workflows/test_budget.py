"""Token accounting per turn and per session, and the per-session budget."""

from __future__ import annotations

from durable_loop.core.config import RuntimeConfig
from durable_loop.testing import reply
from tests.conftest import settings_for, unique
from tests.workflows.toolkit import ToolLog, recording_tools


def usage(prompt: int, completion: int, cached: int = 0) -> dict:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "prompt_tokens_details": {"cached_tokens": cached},
    }


async def test_usage_is_summed_per_turn_message_and_session(loop_worker, scripted_llm):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model,
        [
            reply.tool_call("add", {"a": 1, "b": 2}),
            reply.text("3", usage=usage(40, 2, cached=32)),
            reply.text("hi", usage=usage(50, 1, cached=40)),
        ],
    )
    async with loop_worker(recording_tools(ToolLog())) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        one = await w.sessions.send(sid, "1+2?")
        two = await w.sessions.send(sid, "hello")
        status = await w.sessions.status(sid)
        stored = await w.store.read(sid)

    assert one.usage.model_dump() == {"input_tokens": 50, "output_tokens": 7, "cached_tokens": 32}
    assert two.usage.model_dump() == {"input_tokens": 50, "output_tokens": 1, "cached_tokens": 40}
    assert status.usage.model_dump() == {
        "input_tokens": 100,
        "output_tokens": 8,
        "cached_tokens": 72,
    }
    per_turn = [m.meta["usage"] for m in stored if m.message.role == "assistant"]
    assert [u["input_tokens"] for u in per_turn] == [10, 40, 50]


async def test_budget_exceeded_ends_the_loop_cleanly_and_the_session_stays_open(
    loop_worker, scripted_llm
):
    model, sid, log = unique("m"), unique("s"), ToolLog()
    scripted_llm.script(
        model,
        [
            reply.tool_call("add", {"a": 1, "b": 2}),  # 15 tokens
            reply.text("3"),  # 30
            reply.tool_call("add", {"a": 2, "b": 2}),  # 45: over the budget of 40
            reply.text("never requested"),
        ],
    )
    runtime = RuntimeConfig(max_session_tokens=40)
    async with loop_worker(recording_tools(log)) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=runtime))
        first = await w.sessions.send(sid, "1+2?")
        second = await w.sessions.send(sid, "2+2?")
        third = await w.sessions.send(sid, "anything")
        status = await w.sessions.status(sid)
        stored = await w.store.read(sid)

    assert first.status == "completed" and first.reply == "3"
    assert second.status == "failed" and second.error.code == "BUDGET_EXCEEDED"
    assert "45 tokens" in second.error.message and "max_session_tokens=40" in second.error.message
    # the turn that crossed the budget asked for a tool: not run, paired with the error
    (unrun,) = second.tool_calls
    assert (unrun.ok, unrun.executed, unrun.error_codes) == (False, False, ["BUDGET_EXCEEDED"])
    assert third.error.code == "BUDGET_EXCEEDED" and third.turns == 0
    assert len(scripted_llm.requests(model)) == 3 and log.names() == ["add"]
    (paired,) = [m.message for m in stored if m.message.role == "tool"][1:]
    asked = [m.message for m in stored if m.message.tool_calls][-1].tool_calls[0]
    assert paired.tool_call_id == asked.id and paired.envelope is not None
    assert [e.code for e in paired.envelope.errors] == ["BUDGET_EXCEEDED"]
    assert status.state == "idle" and status.messages_done == 3
    assert status.usage.total_tokens == 45
    assert [m.message.content for m in stored if m.message.role == "user"] == [
        "1+2?",
        "2+2?",
        "anything",
    ]


async def test_calls_refused_for_their_own_reason_keep_it_on_the_crossing_turn(
    loop_worker, scripted_llm
):
    model, sid, log = unique("m"), unique("s"), ToolLog()
    crossing = reply.tool_calls(("add", {"a": 1, "b": 2}), ("no_such_tool", {}))
    scripted_llm.script(model, [crossing, reply.text("never requested")])
    runtime = RuntimeConfig(max_session_tokens=10)
    async with loop_worker(recording_tools(log)) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=runtime))
        result = await w.sessions.send(sid, "1+2?")
    assert result.error.code == "BUDGET_EXCEEDED" and result.turns == 1
    assert [(t.name, t.executed, t.error_codes) for t in result.tool_calls] == [
        ("add", False, ["BUDGET_EXCEEDED"]),
        ("no_such_tool", False, ["TOOL_NOT_FOUND"]),
    ]
    assert log.names() == [] and len(scripted_llm.requests(model)) == 1
