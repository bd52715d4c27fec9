"""``ask_for_unsaid_values``: the message's first call, filled with values nobody gave, is
not executed; the model is asked to answer in words or to ask for the values."""

from __future__ import annotations

import pytest

from durable_loop.core.config import RuntimeConfig
from durable_loop.testing import reply
from tests.workflows.test_endings import run_session

ON = RuntimeConfig(recoveries=["ask_for_unsaid_values", "retry_after_tool_error"])
QUESTION = "what is the mass of an electron?"


async def test_a_first_call_with_made_up_values_is_not_run_and_the_model_answers_in_words(
    loop_worker, scripted_llm
):
    result, requests, log, stored = await run_session(
        loop_worker,
        scripted_llm,
        [reply.tool_call("add", {"a": 120, "b": 10}), reply.text("About 9.109e-31 kg.")],
        runtime=ON,
        text=QUESTION,
    )
    assert result.status == "completed", result.error
    assert result.reply == "About 9.109e-31 kg." and result.recoveries == ["ask_for_unsaid_values"]
    assert log.names() == []
    assert len(requests) == 2 and "tools" not in requests[1].body
    refused, prompt = requests[1].messages[-2:]
    assert refused["role"] == "tool" and "ARGUMENTS_NOT_GIVEN" in refused["content"]
    assert prompt["role"] == "user" and prompt["content"].startswith("No tool ran")
    assert "gives add its a, b" in prompt["content"]
    assert [m.message.synthetic for m in stored if m.message.role == "user"] == [False, True]


@pytest.mark.parametrize(
    ("text", "call"),
    [
        ("what is 37 plus 43?", reply.tool_call("add", {"a": 37, "b": 43})),
        ("take a short nap", reply.tool_call("nap", {"seconds": 5, "label": "siesta"})),
    ],
    ids=["values-the-person-gave", "a-tool-the-person-named"],
)
async def test_a_first_call_runs_with_given_values_or_of_a_tool_the_person_named(
    loop_worker, scripted_llm, text, call
):
    """A named tool's values may be knowledge: its first call runs with values of the
    model's own."""
    result, requests, log, _ = await run_session(
        loop_worker, scripted_llm, [call, reply.text("Done.")], runtime=ON, text=text
    )
    assert result.status == "completed" and result.recoveries == []
    assert len(log.names()) == 1 and "tools" in requests[1].body


async def test_without_the_recovery_the_made_up_first_call_runs(loop_worker, scripted_llm):
    result, _, log, _ = await run_session(
        loop_worker,
        scripted_llm,
        [reply.tool_call("add", {"a": 120, "b": 10}), reply.text("130")],
        text=QUESTION,
    )
    assert result.status == "completed" and result.recoveries == []
    assert log.names() == ["add"]
