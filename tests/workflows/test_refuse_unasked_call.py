"""``refuse_unasked_call``: after the asked-for call, a call of another tool filled with
values nobody gave is not executed, and the message is finalized from the results."""

from __future__ import annotations

from durable_loop.core.config import RuntimeConfig
from durable_loop.testing import reply
from tests.workflows.test_endings import run_session

ON = RuntimeConfig(recoveries=["refuse_unasked_call", "retry_after_tool_error"])
ASK = "add 37 and 43"
ADD = reply.tool_call("add", {"a": 37, "b": 43})


async def test_a_made_up_call_after_the_asked_one_is_refused_and_the_message_finalized(
    loop_worker, scripted_llm
):
    result, requests, log, stored = await run_session(
        loop_worker,
        scripted_llm,
        [ADD, reply.tool_call("nap", {"seconds": 5, "label": "siesta"}), reply.text("It is 80.")],
        runtime=ON,
        text=ASK,
    )
    assert result.status == "completed", result.error
    assert result.reply == "It is 80." and result.recoveries == ["refuse_unasked_call"]
    assert log.names() == ["add"]
    assert len(requests) == 3 and "tools" not in requests[2].body
    refused, prompt = requests[2].messages[-2:]
    assert refused["role"] == "tool" and "ARGUMENTS_NOT_GIVEN" in refused["content"]
    assert "seconds, label" in refused["content"]
    assert prompt["role"] == "user" and "No more tools will run" in prompt["content"]
    assert "- add (Add two integers): " in prompt["content"] and "nap" not in prompt["content"]
    assert [m.message.synthetic for m in stored if m.message.role == "user"] == [False, True]
    nap_result = next(m.message for m in stored if m.message.name == "nap")
    assert nap_result.envelope is not None and not nap_result.envelope.ok


async def test_a_follow_up_call_with_values_from_the_request_and_results_runs(
    loop_worker, scripted_llm
):
    result, requests, log, _ = await run_session(
        loop_worker,
        scripted_llm,
        [
            ADD,
            reply.tool_call("nap", {"seconds": 0, "label": "80"}, "nap"),
            reply.text("80, and rested."),
        ],
        runtime=ON,
        text="add 37 and 43, then nap 0 seconds labelled with the sum",
    )
    assert result.status == "completed" and result.recoveries == []
    assert log.names() == ["add", "nap"]
    assert "tools" in requests[2].body


async def test_a_call_of_a_tool_the_person_named_runs_with_values_of_the_models_own(
    loop_worker, scripted_llm
):
    result, _, log, _ = await run_session(
        loop_worker,
        scripted_llm,
        [ADD, reply.tool_call("nap", {"seconds": 5, "label": "siesta"}, "nap"), reply.text("80")],
        runtime=ON,
        text="add 37 and 43, then take a short nap",
    )
    assert result.status == "completed" and result.recoveries == []
    assert log.names() == ["add", "nap"]


async def test_without_the_recovery_the_made_up_call_runs(loop_worker, scripted_llm):
    result, _, log, _ = await run_session(
        loop_worker,
        scripted_llm,
        [ADD, reply.tool_call("nap", {"seconds": 0, "label": "siesta"}), reply.text("80")],
        text=ASK,
    )
    assert result.status == "completed" and result.recoveries == []
    assert log.names() == ["add", "nap"]
