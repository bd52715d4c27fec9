"""A final reply that is only a tool call written as text never completes a message."""

from __future__ import annotations

import json

from durable_loop.core.config import RuntimeConfig
from durable_loop.testing import reply
from tests.workflows.test_endings import run_session

TEXT_CALL = json.dumps({"name": "add", "arguments": json.dumps({"a": 37, "b": 43})})
REPEAT_THEN_TEXT_CALL = [
    reply.tool_call("add", {"a": 37, "b": 43}),
    reply.tool_call("add", {"a": 37, "b": 43}, "again"),
    reply.text(TEXT_CALL),
]


async def test_a_text_call_after_the_repeat_guard_fails_with_a_code_not_completed(
    loop_worker, scripted_llm
):
    result, requests, log, stored = await run_session(
        loop_worker, scripted_llm, REPEAT_THEN_TEXT_CALL
    )
    assert result.status == "failed"
    assert result.error is not None and result.error.code == "REPLY_NOT_AN_ANSWER"
    assert "'add'" in result.error.message
    assert result.reply is None and result.recoveries == []
    assert len(requests) == 3 and log.count("add") == 1
    assert stored[-1].message.content == TEXT_CALL  # kept in the transcript, not the reply


async def test_finalize_text_call_reply_quotes_the_results_and_returns_the_answer(
    loop_worker, scripted_llm
):
    result, requests, _, stored = await run_session(
        loop_worker,
        scripted_llm,
        [*REPEAT_THEN_TEXT_CALL, reply.text("37 + 43 is 80.")],
        runtime=RuntimeConfig(finalize_text_call_reply=True),
    )
    assert result.status == "completed", result.error
    assert result.reply == "37 + 43 is 80." and result.recoveries == ["finalize_text_call_reply"]
    final_request = requests[3]
    assert "tools" not in final_request.body
    prompt = final_request.messages[-1]
    assert prompt["role"] == "user" and "tool call written as text" in prompt["content"]
    assert "- add (Add two integers): " in prompt["content"] and "80" in prompt["content"]
    assert [m.message.synthetic for m in stored if m.message.role == "user"][-1] is True


async def test_a_second_text_call_after_finalization_fails(loop_worker, scripted_llm):
    tagged = '<tool_call>{"name": "add", "arguments": {"a": 37, "b": 43}}</tool_call>'
    result, requests, _, _ = await run_session(
        loop_worker,
        scripted_llm,
        [*REPEAT_THEN_TEXT_CALL, reply.text(tagged)],
        runtime=RuntimeConfig(finalize_text_call_reply=True),
    )
    assert result.status == "failed"
    assert result.error is not None and result.error.code == "REPLY_NOT_AN_ANSWER"
    assert "after a finalization request" in result.error.message
    assert result.recoveries == ["finalize_text_call_reply"] and len(requests) == 4


async def test_json_that_names_no_tool_is_an_answer(loop_worker, scripted_llm):
    answer = json.dumps({"name": "Ada", "arguments": "none"})
    result, _, _, _ = await run_session(
        loop_worker, scripted_llm, [reply.tool_call("add", {"a": 1, "b": 1}), reply.text(answer)]
    )
    assert result.status == "completed" and result.reply == answer


REFERRAL = "To add them, you can use the `add` function with a=2 and b=3."


async def test_a_reply_naming_an_uncalled_tool_is_sent_back_for_the_call(loop_worker, scripted_llm):
    result, requests, log, stored = await run_session(
        loop_worker,
        scripted_llm,
        [reply.text(REFERRAL), reply.tool_call("add", {"a": 2, "b": 3}), reply.text("It is 5.")],
        runtime=RuntimeConfig(call_referred_tool=True),
    )
    assert result.status == "completed" and result.reply == "It is 5."
    assert result.recoveries == ["call_referred_tool"] and log.count("add") == 1
    nudge = requests[1].messages[-1]
    assert nudge["role"] == "user" and "call add" in nudge["content"].lower()
    assert requests[1].body["tool_choice"] == "required"
    assert [m.message.synthetic for m in stored if m.message.role == "user"] == [False, True]


async def test_a_referral_is_sent_back_once_and_is_off_by_default(loop_worker, scripted_llm):
    off, requests, _, _ = await run_session(loop_worker, scripted_llm, [reply.text(REFERRAL)])
    assert off.status == "completed" and off.reply == REFERRAL and len(requests) == 1

    twice, requests, _, _ = await run_session(
        loop_worker,
        scripted_llm,
        [reply.text(REFERRAL), reply.text(REFERRAL)],
        runtime=RuntimeConfig(call_referred_tool=True),
    )
    assert twice.reply == REFERRAL and len(requests) == 2
    assert twice.recoveries == ["call_referred_tool"]


TWO_TOOLS = 'Add 2 and 3 with add, then nap for 0 seconds with nap (label "x").'
DONE = reply.text("Done.")


async def test_a_reply_before_a_requested_tool_is_called_is_sent_back_for_it(
    loop_worker, scripted_llm
):
    result, requests, log, stored = await run_session(
        loop_worker,
        scripted_llm,
        [
            reply.tool_call("add", {"a": 2, "b": 3}),
            DONE,
            reply.tool_call("nap", {"seconds": 0, "label": "x"}),
            DONE,
        ],
        runtime=RuntimeConfig(call_requested_tool=True),
        text=TWO_TOOLS,
    )
    assert result.status == "completed" and result.reply == "Done."
    assert result.recoveries == ["call_requested_tool"]
    assert [e.name for e in log.executions] == ["add", "nap"]
    nudge = requests[2].messages[-1]
    assert nudge["role"] == "user" and "Call nap now" in nudge["content"]
    assert requests[2].body["tool_choice"] == "required"
    assert [m.message.synthetic for m in stored if m.message.role == "user"] == [False, True]


async def test_each_requested_tool_is_asked_for_once_and_never_when_off_or_negated(
    loop_worker, scripted_llm
):
    off, requests, _, _ = await run_session(loop_worker, scripted_llm, [DONE], text=TWO_TOOLS)
    assert off.reply == "Done." and len(requests) == 1 and off.recoveries == []

    stubborn, requests, log, _ = await run_session(
        loop_worker,
        scripted_llm,
        [DONE, DONE, DONE],
        runtime=RuntimeConfig(call_requested_tool=True),
        text=TWO_TOOLS,
    )
    assert stubborn.status == "completed" and len(requests) == 3 and log.executions == []
    assert stubborn.recoveries == ["call_requested_tool"] * 2
    asked = [r.messages[-1]["content"] for r in requests[1:]]
    assert ["Call add now" in asked[0], "Call nap now" in asked[1]] == [True, True]

    negated, requests, _, _ = await run_session(
        loop_worker,
        scripted_llm,
        [reply.text("Hi.")],
        runtime=RuntimeConfig(call_requested_tool=True),
        text="Do not use add or nap, just say hi.",
    )
    assert negated.reply == "Hi." and len(requests) == 1 and negated.recoveries == []


REPEAT = REPEAT_THEN_TEXT_CALL[:2]


async def test_finalize_after_repeat_asks_for_the_answer_in_the_repeat_turn(
    loop_worker, scripted_llm
):
    result, requests, log, stored = await run_session(
        loop_worker,
        scripted_llm,
        [*REPEAT, reply.text("37 + 43 is 80.")],
        runtime=RuntimeConfig(finalize_after_repeat=True, finalize_text_call_reply=True),
        text="Add 37 and 43, then tell me the sum.",
    )
    assert result.status == "completed", result.error
    assert result.reply == "37 + 43 is 80." and result.recoveries == ["finalize_after_repeat"]
    assert len(requests) == 3 and log.count("add") == 1
    final_request = requests[2]
    assert "tools" not in final_request.body
    reused, prompt = final_request.messages[-2:]
    assert reused["role"] == "tool"
    assert prompt["role"] == "user" and "repeated an earlier one" in prompt["content"]
    assert "- add (Add two integers): " in prompt["content"] and "80" in prompt["content"]
    assert 'request was: "Add 37 and 43, then tell me the sum."\n' in prompt["content"]
    assert [m.message.synthetic for m in stored if m.message.role == "user"] == [False, True]


async def test_a_text_call_after_finalize_after_repeat_still_gets_the_text_call_request(
    loop_worker, scripted_llm
):
    result, requests, _, _ = await run_session(
        loop_worker,
        scripted_llm,
        [*REPEAT_THEN_TEXT_CALL, reply.text("It is 80.")],
        runtime=RuntimeConfig(finalize_after_repeat=True, finalize_text_call_reply=True),
    )
    assert result.status == "completed" and result.reply == "It is 80."
    assert result.recoveries == ["finalize_after_repeat", "finalize_text_call_reply"]
    assert len(requests) == 4
    assert "tool call written as text" in requests[3].messages[-1]["content"]


async def test_finalize_after_repeat_is_off_by_default(loop_worker, scripted_llm):
    result, requests, _, _ = await run_session(
        loop_worker, scripted_llm, [*REPEAT, reply.text("80")]
    )
    assert result.status == "completed" and result.recoveries == []
    assert requests[2].messages[-1]["role"] == "tool"


async def test_a_reply_without_words_is_finalized_then_fails(loop_worker, scripted_llm):
    result, requests, _, _ = await run_session(
        loop_worker,
        scripted_llm,
        [*REPEAT, reply.text("{\n"), reply.text("37 + 43 is 80.")],
        runtime=RuntimeConfig(finalize_text_call_reply=True),
    )
    assert result.status == "completed" and result.reply == "37 + 43 is 80."
    assert result.recoveries == ["finalize_text_call_reply"] and len(requests) == 4

    failed, _, _, _ = await run_session(loop_worker, scripted_llm, [*REPEAT, reply.text("{")])
    assert failed.status == "failed" and failed.error is not None
    assert failed.error.code == "REPLY_NOT_AN_ANSWER" and "no words" in failed.error.message


CUT_OFF_CALL = '{"name": "add", "arguments": {"a": 37, "b": 4'


async def test_a_call_cut_off_by_the_token_limit_is_no_answer_either(loop_worker, scripted_llm):
    """``{"name": "add", "arguments": {...`` cut off mid-way never parses as a call, and
    used to complete the message as its reply (patch ``reply-cut-off-call``)."""
    failed, _, _, _ = await run_session(
        loop_worker,
        scripted_llm,
        [reply.tool_call("add", {"a": 37, "b": 43}), reply.text(CUT_OFF_CALL)],
    )
    assert failed.status == "failed" and failed.error is not None
    assert failed.error.code == "REPLY_NOT_AN_ANSWER" and "cut off" in failed.error.message
    recovered, requests, _, _ = await run_session(
        loop_worker,
        scripted_llm,
        [
            reply.tool_call("add", {"a": 37, "b": 43}),
            reply.text(CUT_OFF_CALL),
            reply.text("37 + 43 is 80."),
        ],
        runtime=RuntimeConfig(finalize_text_call_reply=True),
    )
    assert (recovered.status, recovered.reply) == ("completed", "37 + 43 is 80.")
    assert recovered.recoveries == ["finalize_text_call_reply"]
    assert "tools" not in requests[2].body


GREET = '{"name": "greet", "arguments": {"message": "Good morning!"}}'


async def test_a_call_of_a_tool_that_does_not_exist_is_no_answer(loop_worker, scripted_llm):
    """A greeting answered by "calling" ``greet`` as JSON text used to complete the message
    with that JSON as its reply (patch ``reply-unknown-text-call``)."""
    failed, _, log, _ = await run_session(loop_worker, scripted_llm, [reply.text(GREET)])
    assert failed.status == "failed" and failed.error is not None
    assert failed.error.code == "REPLY_NOT_AN_ANSWER"
    assert "'greet', a tool that does not exist" in failed.error.message
    recovered, requests, _, _ = await run_session(
        loop_worker,
        scripted_llm,
        [reply.text(GREET), reply.text("Good morning! How can I help?")],
        runtime=RuntimeConfig(finalize_text_call_reply=True),
    )
    assert (recovered.status, recovered.reply) == ("completed", "Good morning! How can I help?")
    assert recovered.recoveries == ["finalize_text_call_reply"]
    assert "tools" not in requests[1].body and len(requests) == 2
    assert log.executions == []
