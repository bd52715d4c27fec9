"""How a message's loop ends: empty finals, the repeated-call guard, limits and policies."""

from __future__ import annotations

import json

from durable_loop.core.config import RuntimeConfig
from durable_loop.core.recoveries.fix_empty_final import (
    DEFAULT_TEXT as DEFAULT_FIX_EMPTY_FINAL_TEXT,
)
from durable_loop.testing import reply
from tests.conftest import settings_for, unique
from tests.workflows.toolkit import ToolLog, recording_tools


async def run_session(
    loop_worker, scripted_llm, steps, runtime=None, *, then=None, text: str = "please"
):
    model, sid, log = unique("m"), unique("s"), ToolLog()
    scripted_llm.script(model, steps, then=then)
    async with loop_worker(recording_tools(log)) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=runtime))
        result = await w.sessions.send(sid, text)
        stored = await w.store.read(sid)
    return result, scripted_llm.requests(model), log, stored


async def test_empty_final_is_recovered_with_one_request_without_tools(loop_worker, scripted_llm):
    result, requests, _, stored = await run_session(
        loop_worker,
        scripted_llm,
        [reply.tool_call("add", {"a": 2, "b": 2}), reply.text(""), reply.text("4")],
    )
    assert result.status == "completed" and result.reply == "4"
    assert len(requests) == 3
    assert "tools" not in requests[2].body and "tool_choice" not in requests[2].body
    assert requests[2].messages[-1] == {"role": "user", "content": DEFAULT_FIX_EMPTY_FINAL_TEXT}
    assert stored[-2].message.synthetic is True


async def test_empty_final_fails_when_the_fix_is_disabled(loop_worker, scripted_llm):
    result, requests, _, _ = await run_session(
        loop_worker,
        scripted_llm,
        [reply.tool_call("add", {"a": 2, "b": 2}), reply.text(None)],
        runtime=RuntimeConfig(fix_empty_final=False),
    )
    assert result.status == "failed"
    assert result.error is not None and result.error.code == "EMPTY_FINAL"
    assert len(requests) == 2


async def test_repeated_identical_call_reuses_the_result_and_turns_tools_off(
    loop_worker, scripted_llm
):
    result, requests, log, stored = await run_session(
        loop_worker,
        scripted_llm,
        [
            reply.tool_call("add", {"a": 1, "b": 2}),
            # Same call, keys in another order: the canonical arguments are identical.
            reply.tool_call("add", '{"b": 2,  "a": 1}', "again"),
            reply.text("3, as computed"),
        ],
    )
    assert result.status == "completed" and result.reply == "3, as computed"
    assert log.count("add") == 1
    assert [(t.executed, t.reused, t.ok) for t in result.tool_calls] == [
        (True, False, True),
        (False, True, True),
    ]
    assert len(requests) == 3 and "tools" not in requests[2].body
    reused = json.loads(requests[2].messages[-1]["content"])
    # One vocabulary: the envelope says what the RunResult says (reused, not deduplicated),
    # and its text names where the earlier call was.
    assert reused["data"] == 3 and reused["reused"] is True and "deduplicated" not in reused
    assert "earlier turn" in reused["warnings"][0] and "this reply" not in reused["warnings"][0]
    assert requests[2].messages[-1]["tool_call_id"] == "again"
    assert stored[4].meta == {"reused_from": 2}


async def test_max_turns_fails_the_message(loop_worker, scripted_llm):
    def keep_calling(request):
        return reply.tool_call("add", {"a": len(request.messages), "b": 0})

    result, requests, log, _ = await run_session(
        loop_worker, scripted_llm, [], RuntimeConfig(max_turns=3), then=keep_calling
    )
    assert result.status == "failed"
    assert result.error is not None and result.error.code == "MAX_TURNS"
    assert result.turns == 3 and len(requests) == 3 and log.count("add") == 3


async def test_enforced_mode_without_tool_calls_fails(loop_worker, scripted_llm):
    result, _, _, _ = await run_session(
        loop_worker,
        scripted_llm,
        [reply.text("I know this without tools")],
        RuntimeConfig(tool_use_mode="enforced"),
    )
    assert result.status == "failed"
    assert result.error is not None and result.error.code == "NO_TOOL_CALLS"
    assert result.reply == "I know this without tools"


FAILING_THEN_OK = [
    reply.tool_calls(("flaky", {"reason": "disk"}), ("add", {"a": 1, "b": 1})),
    reply.text("partly done"),
]


async def test_fatal_policy_fails_when_a_tool_ended_in_error(loop_worker, scripted_llm):
    result, _, log, _ = await run_session(
        loop_worker,
        scripted_llm,
        FAILING_THEN_OK,
        RuntimeConfig(tool_use_mode="enforced", tool_failure_policy="fatal"),
    )
    assert result.status == "failed"
    assert result.error is not None and result.error.code == "TOOL_ERROR"
    assert "flaky" in result.error.message
    assert sorted(log.names()) == ["add", "flaky"]


async def test_tolerated_policy_accepts_one_success(loop_worker, scripted_llm):
    result, _, _, _ = await run_session(
        loop_worker,
        scripted_llm,
        FAILING_THEN_OK,
        RuntimeConfig(tool_use_mode="enforced", tool_failure_policy="tolerated"),
    )
    assert result.status == "completed" and result.reply == "partly done"
    assert [(t.name, t.ok) for t in result.tool_calls] == [("flaky", False), ("add", True)]


async def test_tolerated_policy_still_needs_one_success(loop_worker, scripted_llm):
    result, _, _, _ = await run_session(
        loop_worker,
        scripted_llm,
        [reply.tool_call("flaky", {"reason": "net"}), reply.text("gave up")],
        RuntimeConfig(tool_use_mode="enforced", tool_failure_policy="tolerated"),
    )
    assert result.status == "failed"
    assert result.error is not None and result.error.code == "TOOL_ERROR"


async def test_fatal_policy_accepts_a_tool_that_recovered(loop_worker, scripted_llm):
    result, _, _, _ = await run_session(
        loop_worker,
        scripted_llm,
        [
            reply.tool_call("add", {"a": "x", "b": 1}),
            reply.tool_call("add", {"a": 1, "b": 1}),
            reply.text("2"),
        ],
        RuntimeConfig(tool_use_mode="enforced"),
    )
    assert result.status == "completed", result.error


async def test_reused_result_reports_its_own_outcome(loop_worker, scripted_llm):
    result, _, log, _ = await run_session(
        loop_worker,
        scripted_llm,
        [
            reply.tool_call("add", {"a": 1, "b": 2}),
            reply.tool_call("add", {"a": "x", "b": 2}),
            reply.tool_call("add", {"a": 1, "b": 2}, "again"),
            reply.text("3"),
        ],
        RuntimeConfig(tool_use_mode="enforced"),
    )
    assert [(t.ok, t.reused) for t in result.tool_calls] == [
        (True, False),
        (False, False),
        (True, True),
    ]
    assert result.status == "completed", result.error
    assert log.count("add") == 1


async def test_retry_after_tool_error_sends_the_model_back_once_with_a_tool_required(
    loop_worker, scripted_llm
):
    result, requests, log, stored = await run_session(
        loop_worker,
        scripted_llm,
        [
            reply.tool_call("add", {"a": "two", "b": 2}),
            reply.text("Done."),
            reply.tool_call("add", {"a": 2, "b": 2}, "fixed"),
            reply.text("4"),
        ],
        runtime=RuntimeConfig(retry_after_tool_error=1),
    )
    assert result.status == "completed" and result.reply == "4"
    assert [(t.name, t.ok) for t in result.tool_calls] == [("add", False), ("add", True)]
    assert log.count("add") == 1
    nudge = requests[2].messages[-1]
    assert nudge["role"] == "user" and nudge["content"].startswith("Your add call failed: ")
    assert "INVALID_ARGS" in nudge["content"]
    assert requests[2].body["tool_choice"] == "required"
    assert requests[1].body["tool_choice"] == requests[3].body["tool_choice"] == "auto"
    assert [m.message.synthetic for m in stored if m.message.role == "user"] == [False, True]


async def test_retry_after_tool_error_is_bounded_and_off_by_default(loop_worker, scripted_llm):
    steps = [reply.tool_call("flaky", {"reason": "x"}), reply.text("Done.")]
    off, off_requests, _, _ = await run_session(loop_worker, scripted_llm, steps)
    assert off.reply == "Done." and len(off_requests) == 2

    stubborn = [
        reply.tool_call("flaky", {"reason": "x"}),
        reply.text("Done."),
        reply.tool_call("flaky", {"reason": "y"}, "again"),
        reply.text("Done, really."),
    ]
    once, requests, log, _ = await run_session(
        loop_worker, scripted_llm, stubborn, RuntimeConfig(retry_after_tool_error=1)
    )
    assert len(requests) == 4 and log.count("flaky") == 2
    assert once.reply == "Done, really."


async def test_retry_after_a_repeated_failed_call_quotes_the_original_error(
    loop_worker, scripted_llm
):
    result, requests, log, _ = await run_session(
        loop_worker,
        scripted_llm,
        [
            reply.tool_call("flaky", {"reason": "x"}),
            reply.tool_call("flaky", {"reason": "x"}, "same"),
            reply.text("Done."),
            reply.tool_call("add", {"a": 1, "b": 1}, "other"),
            reply.text("2"),
        ],
        runtime=RuntimeConfig(retry_after_tool_error=1, tool_failure_policy="tolerated"),
    )
    assert log.count("flaky") == 1
    repeated = json.loads(requests[2].messages[-1]["content"])
    assert "Repeating it cannot succeed" in repeated["warnings"][-1]
    assert "tools" not in requests[2].body  # the repeat guard turned tools off ...
    nudge = requests[3].messages[-1]["content"]
    assert "flaky failed: x" in nudge and "reused" not in nudge
    assert requests[3].body["tool_choice"] == "required"  # ... the retry turns them on
    assert result.status == "completed" and result.reply == "2"
