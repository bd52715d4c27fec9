"""``finalize_when_done``: once a turn's successful calls carry everything the person's
request gives, the next request asks for the answer without tools, so the model has no
call to repeat; while something is left, the tools stay."""

from __future__ import annotations

from durable_loop.core.config import RuntimeConfig
from durable_loop.testing import reply
from tests.conftest import settings_for, unique
from tests.workflows.test_endings import run_session
from tests.workflows.toolkit import ToolLog, recording_tools

ON = RuntimeConfig(
    recoveries=["repeated_call_guard", "finalize_after_repeat", "finalize_when_done"]
)


async def test_a_call_that_carries_the_whole_request_is_followed_by_the_answer_request(
    loop_worker, scripted_llm
):
    result, requests, log, stored = await run_session(
        loop_worker,
        scripted_llm,
        [reply.tool_call("add", {"a": 37, "b": 43}), reply.text("37 plus 43 is 80.")],
        runtime=ON,
        text="what is 37 plus 43?",
    )
    assert result.status == "completed", result.error
    assert result.reply == "37 plus 43 is 80." and result.recoveries == ["finalize_when_done"]
    assert log.names() == ["add"]
    assert len(requests) == 2 and "tools" not in requests[1].body
    prompt = requests[1].messages[-1]
    assert prompt["role"] == "user" and prompt["content"].startswith("No more tools will run")
    assert 'The user\'s request was: "what is 37 plus 43?"' in prompt["content"]
    assert [m.message.synthetic for m in stored if m.message.role == "user"] == [False, True]


async def test_a_value_no_call_carried_keeps_the_tools_for_the_next_step(loop_worker, scripted_llm):
    result, requests, log, _ = await run_session(
        loop_worker,
        scripted_llm,
        [
            reply.tool_call("add", {"a": 8, "b": 4}),
            reply.tool_call("add", {"a": 12, "b": 5}),
            reply.text("The total is 17."),
        ],
        runtime=ON,
        text="add 8 and 4, then add 5 to the total",
    )
    assert result.status == "completed", result.error
    assert log.names() == ["add", "add"]
    assert "tools" in requests[1].body
    assert "tools" not in requests[2].body and result.recoveries == ["finalize_when_done"]


async def test_a_failed_call_keeps_the_tools(loop_worker, scripted_llm):
    result, requests, log, _ = await run_session(
        loop_worker,
        scripted_llm,
        [reply.tool_call("flaky", {"reason": "disk full"}), reply.text("It failed: disk full.")],
        runtime=RuntimeConfig(recoveries=["finalize_when_done"]),
        text="try the flaky tool with reason disk full",
    )
    assert result.status == "completed", result.error
    assert log.names() == ["flaky"]
    assert "tools" in requests[1].body and result.recoveries == []


async def test_without_the_recovery_the_tools_stay_and_the_repeat_is_answered(
    loop_worker, scripted_llm
):
    call = reply.tool_call("add", {"a": 37, "b": 43})
    result, requests, log, _ = await run_session(
        loop_worker,
        scripted_llm,
        [call, call, reply.text("80.")],
        runtime=RuntimeConfig(recoveries=["repeated_call_guard", "finalize_after_repeat"]),
        text="what is 37 plus 43?",
    )
    assert result.status == "completed", result.error
    assert log.names() == ["add"] and result.recoveries == ["finalize_after_repeat"]
    assert "tools" in requests[1].body and len(requests) == 3


async def test_only_a_session_with_the_recovery_has_request_left_in_its_history(
    loop_worker, scripted_llm
):
    steps = [reply.tool_call("add", {"a": 37, "b": 43}), reply.text("80.")]
    found: dict[bool, list[bool]] = {}
    for on in (True, False):
        model, sid = unique("m"), unique("s")
        scripted_llm.script(model, steps)
        runtime = RuntimeConfig(recoveries=["finalize_when_done"] if on else [])
        async with loop_worker(recording_tools(ToolLog())) as w:
            await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=runtime))
            await w.sessions.send(sid, "what is 37 plus 43?")
            history = await w.sessions.handle(sid).fetch_history()
        found[on] = [
            b"request_left" in payload.data
            for event in history.events
            if event.HasField("activity_task_completed_event_attributes")
            for payload in event.activity_task_completed_event_attributes.result.payloads
        ]
    assert found[True].count(True) == 1
    assert found[False] and not any(found[False])
