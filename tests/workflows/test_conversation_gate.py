"""Recovery ``withhold_tools_from_conversation``: one gate request before a message's first
turn; on ``none`` the message's turns go without tools, on a tool name (or anything
unreadable, or a failed gate) the tools are offered as before."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from rich.console import Console

from durable_loop.client.history import fetch_histories
from durable_loop.client.trace.models import Trace
from durable_loop.client.trace.render import print_trace
from durable_loop.core.config import RuntimeConfig
from durable_loop.core.recoveries.call_requested_tool import (
    NAMED_PATCH_ID,
    OFFERED_CALL_PATCH_ID,
    ROUTED_PATCH_ID,
    ROUTED_TEXT,
)
from durable_loop.core.recoveries.withhold_tools_from_conversation import DEFAULT_EXAMPLES, NAME
from durable_loop.core.results import RunResult
from durable_loop.testing import reply
from durable_loop.testing.history import EventType, events_of, replay_failures
from tests.conftest import settings_for, unique
from tests.versioning.test_patching import patch_markers
from tests.workflows.test_run_control import running
from tests.workflows.toolkit import ToolLog, recording_tools

GATED = RuntimeConfig(recoveries=[NAME])


@dataclass
class Ran:
    result: RunResult
    requests: list
    log: ToolLog
    activities: list[str]
    trace: Trace
    histories: list

    def __iter__(self):
        return iter((self.result, self.requests, self.log, self.activities))


async def run(loop_worker, scripted_llm, temporal_env, steps, runtime=GATED, text="Thanks!"):
    model, sid, log = unique("m"), unique("s"), ToolLog()
    scripted_llm.script(model, steps)
    async with loop_worker(recording_tools(log)) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=runtime))
        result = await w.sessions.send(sid, text)
        histories = await fetch_histories(temporal_env.client, f"session-{sid}")
        trace = await w.sessions.trace(sid)
    assert await replay_failures(histories) == {}
    activities = [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for h in histories
        for e in events_of(h, EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
    ]
    return Ran(result, scripted_llm.requests(model), log, activities, trace, histories)


async def test_a_message_the_gate_calls_conversation_goes_without_tools(
    loop_worker, scripted_llm, temporal_env
):
    ran = await run(
        loop_worker,
        scripted_llm,
        temporal_env,
        [reply.text('{"tool": "none"}'), reply.text("You're welcome!")],
    )
    result, requests, log, activities = ran
    assert result.status == "completed" and result.reply == "You're welcome!"
    assert result.recoveries == [NAME] and log.executions == []
    assert activities == ["conversation_gate", "llm_turn"]
    gate, turn = requests
    assert "tools" not in gate.body and "tools" not in turn.body
    schema = gate.body["response_format"]["json_schema"]["schema"]
    registered = [spec.name for spec in recording_tools(ToolLog()).specs()]
    assert sorted(schema["properties"]["tool"]["enum"]) == sorted([*registered, "none"])
    assert gate.body["max_tokens"] == 32
    roles = [m["role"] for m in gate.messages]
    assert roles == ["system", *["user", "assistant"] * len(DEFAULT_EXAMPLES), "user"]
    assert "- add: Add two integers." in gate.messages[0]["content"]
    assert gate.messages[-1]["content"] == "Thanks!"
    assert result.usage.total_tokens == 30  # the gate's request counts
    assert ran.trace.usage.total_tokens == 30
    assert ran.trace.turns[0].gate == "none: the message went without tools"
    console = Console(record=True, width=120)
    print_trace(ran.trace, console)
    assert "conversation gate: none: the message went without tools" in console.export_text()


async def test_a_message_the_gate_routes_to_a_tool_is_sent_with_tools(
    loop_worker, scripted_llm, temporal_env
):
    ran = await run(
        loop_worker,
        scripted_llm,
        temporal_env,
        [reply.text('{"tool": "add"}'), reply.tool_call("add", {"a": 2, "b": 3}), reply.text("5")],
        text="2+3?",
    )
    result, requests, log, activities = ran
    assert ran.trace.turns[0].gate == "add: tools offered"
    assert ran.trace.turns[0].user_text == "2+3?" and ran.trace.turns[1].gate is None
    assert result.status == "completed" and result.reply == "5"
    assert result.recoveries == [] and [e.args for e in log.executions] == [{"a": 2, "b": 3}]
    assert activities[:2] == ["conversation_gate", "llm_turn"]
    assert "tools" in requests[1].body


ROUTED = RuntimeConfig(recoveries=[NAME, "call_requested_tool"])
ROUTED_TO_NAP_ANSWERED_AFTER_ADD = [
    reply.text('{"tool": "nap"}'),
    reply.tool_call("add", {"a": 2, "b": 3}),
    reply.text("It is 5."),
]


async def test_a_message_that_skipped_the_tool_it_was_routed_to_is_asked_for_it_once(
    loop_worker, scripted_llm, temporal_env
):
    """The message names the nap by a word the addition does not hold ("nap-time"), though
    not the tool as a whole word (which ``call_requested_tool`` asks for anyway)."""
    text = "Add 2 and 3, then it is nap-time"
    ran = await run(
        loop_worker,
        scripted_llm,
        temporal_env,
        [
            *ROUTED_TO_NAP_ANSWERED_AFTER_ADD,
            reply.tool_call("nap", {"seconds": 0, "label": "5"}),
            reply.text("It is 5; I napped on it."),
        ],
        runtime=ROUTED,
        text=text,
    )
    result, requests, log, _ = ran
    assert result.status == "completed" and result.reply == "It is 5; I napped on it."
    assert result.recoveries == ["call_requested_tool"]
    assert [e.name for e in log.executions] == ["add", "nap"]
    asked = requests[3]
    assert asked.body["tool_choice"] == "required"
    assert asked.messages[-1]["content"] == ROUTED_TEXT.format(request=text, name="nap")
    assert ROUTED_PATCH_ID in {m for h in ran.histories for m in patch_markers(h)}


async def test_no_routed_tool_is_asked_for_when_the_message_names_nothing_of_it(
    loop_worker, scripted_llm, temporal_env
):
    """The gate's guess is not the person's request: "take a short break" says nothing of
    the nap, and the addition answered it (BFCL live_multiple, docs/evals.md)."""
    ran = await run(
        loop_worker,
        scripted_llm,
        temporal_env,
        ROUTED_TO_NAP_ANSWERED_AFTER_ADD,
        runtime=ROUTED,
        text="Add 2 and 3, then take a short break",
    )
    result, requests, log, _ = ran
    assert result.status == "completed" and result.reply == "It is 5."
    assert result.recoveries == [] and [e.name for e in log.executions] == ["add"]
    assert [r.body.get("tool_choice") for r in requests[1:]] == ["auto", "auto"]
    markers = {m for h in ran.histories for m in patch_markers(h)}
    assert NAMED_PATCH_ID in markers and ROUTED_PATCH_ID not in markers


async def test_no_routed_tool_is_asked_for_without_another_call_or_after_a_negation(
    loop_worker, scripted_llm, temporal_env
):
    answered = await run(
        loop_worker,
        scripted_llm,
        temporal_env,
        [reply.text('{"tool": "add"}'), reply.text("5")],
        runtime=ROUTED,
        text="2+3?",
    )
    assert answered.result.reply == "5" and answered.result.recoveries == []
    negated = await run(
        loop_worker,
        scripted_llm,
        temporal_env,
        ROUTED_TO_NAP_ANSWERED_AFTER_ADD,
        runtime=ROUTED,
        text="Add 2 and 3, and do not take a break",
    )
    assert negated.result.reply == "It is 5." and negated.result.recoveries == []
    assert [e.name for e in negated.log.executions] == ["add"]


async def test_no_routed_tool_is_forced_after_a_call_of_a_made_up_tool(
    loop_worker, scripted_llm, temporal_env
):
    """BFCL irrelevance: the model invents a tool for a request the offered ones cannot
    serve; asking for the routed tool with a call required would run it anyway."""
    ran = await run(
        loop_worker,
        scripted_llm,
        temporal_env,
        [
            reply.text('{"tool": "nap"}'),
            reply.tool_call("area_of_triangle", {"base": 10, "height": 5}),
            reply.text("I have no tool for that: the area is 25."),
        ],
        runtime=ROUTED,
        text="What is the area of a triangle with base 10 and height 5?",
    )
    result, requests, log, _ = ran
    assert (
        result.status == "completed" and result.reply == "I have no tool for that: the area is 25."
    )
    assert result.recoveries == [] and log.executions == []
    assert [r.body.get("tool_choice") for r in requests[1:]] == ["auto", "auto"]
    markers = {m for h in ran.histories for m in patch_markers(h)}
    assert OFFERED_CALL_PATCH_ID in markers and ROUTED_PATCH_ID not in markers


async def test_an_unreadable_or_failed_gate_leaves_the_tools_offered(
    loop_worker, scripted_llm, temporal_env
):
    unreadable, requests, _, _ = await run(
        loop_worker,
        scripted_llm,
        temporal_env,
        [reply.text("none of them, I think"), reply.text("You're welcome!")],
    )
    assert unreadable.status == "completed" and unreadable.recoveries == []
    assert "tools" in requests[1].body

    ran = await run(
        loop_worker,
        scripted_llm,
        temporal_env,
        [reply.error(400, "response_format not supported"), reply.text("You're welcome!")],
    )
    failed, requests, _, activities = ran
    assert (
        ran.trace.turns[0].gate.startswith("failed (")
        and "tools offered" in ran.trace.turns[0].gate
    )
    assert failed.status == "completed" and failed.reply == "You're welcome!"
    [warning] = failed.warnings
    assert warning.startswith(f"{NAME}: the gate failed (") and "tools offered" in warning
    assert "tools" in requests[1].body
    assert activities == ["conversation_gate", "llm_turn"]


async def test_no_gate_when_a_call_is_required_or_the_recovery_is_off(
    loop_worker, scripted_llm, temporal_env
):
    required = RuntimeConfig(recoveries=[NAME], tool_choice="required")
    steps = [reply.tool_call("add", {"a": 1, "b": 1}), reply.text("2")]
    result, requests, _, activities = await run(
        loop_worker, scripted_llm, temporal_env, steps, runtime=required, text="1+1?"
    )
    assert result.status == "completed" and "conversation_gate" not in activities
    assert "response_format" not in requests[0].body

    off, _, _, activities = await run(
        loop_worker, scripted_llm, temporal_env, [reply.text("Hi!")], runtime=RuntimeConfig()
    )
    assert off.status == "completed" and activities == ["llm_turn"]


async def test_a_later_message_is_shown_to_the_gate_after_the_last_reply(loop_worker, scripted_llm):
    model, sid, log = unique("m"), unique("s"), ToolLog()
    scripted_llm.script(
        model,
        [
            reply.text('{"tool": "add"}'),
            reply.text("It is 5. Shall I add 10 to it?"),
            reply.text('{"tool": "add"}'),
            reply.tool_call("add", {"a": 5, "b": 10}),
            reply.text("15"),
        ],
    )
    async with loop_worker(recording_tools(log)) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=GATED))
        await w.sessions.send(sid, "2+3?")
        result = await w.sessions.send(sid, "Yes please.")
    assert result.status == "completed" and result.reply == "15"
    first, _, second, _, _ = scripted_llm.requests(model)
    assert first.messages[-1]["content"] == "2+3?"
    assert second.messages[-1]["content"] == (
        "Conversation so far:\nassistant: It is 5. Shall I add 10 to it?\n\n"
        "Latest message: Yes please."
    )


async def test_a_cancel_during_the_gate_cancels_the_message_and_the_next_one_runs(
    loop_worker, scripted_llm, temporal_env
):
    model, sid = unique("m"), unique("s")
    slow_gate = reply.slow(reply.text('{"tool": "none"}'), 30)
    scripted_llm.script(
        model, [slow_gate, reply.text('{"tool": "none"}'), reply.text("Hello again!")]
    )
    async with loop_worker(recording_tools(ToolLog())) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=GATED))
        sending = asyncio.create_task(w.sessions.send(sid, "Hi!", message_id="a"))
        await running(w, sid)
        cancelled = await w.sessions.cancel(sid, "a", reason="typo")
        assert await sending == cancelled
        after = await w.sessions.send(sid, "Hello?", message_id="b")
        stored = await w.store.read(sid)
        histories = await fetch_histories(temporal_env.client, f"session-{sid}")
    assert cancelled.status == "cancelled" and "typo" in (cancelled.error.message or "")
    assert after.status == "completed" and after.reply == "Hello again!"
    assert [m.message.role for m in stored][:2] == ["user", "user"]  # message, then the note
    assert stored[0].message.content == "Hi!" and stored[1].message.synthetic
    assert await replay_failures(histories) == {}
