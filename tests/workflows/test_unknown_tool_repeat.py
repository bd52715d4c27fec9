"""The repeated-call guard and a made-up tool: an identical call of a tool that does not
exist, refused once, is a repeat the second time (patch ``repeat-unknown-tool-call``): the
tools are withdrawn and the answer asked for, instead of the model calling it again until
the turn limit."""

from __future__ import annotations

from durable_loop.core.config import RuntimeConfig
from durable_loop.testing import reply
from tests.workflows.test_endings import run_session

PRODUCTION_LIKE = RuntimeConfig(
    recoveries=["repeated_call_guard", "retry_after_tool_error", "finalize_after_repeat"]
)
MADE_UP = reply.tool_call("piano_tips", {"piano": "upright"})


async def test_the_second_identical_call_of_a_made_up_tool_ends_with_the_answer(
    loop_worker, scripted_llm
):
    result, requests, log, _ = await run_session(
        loop_worker,
        scripted_llm,
        [MADE_UP, MADE_UP, reply.text("Tune it twice a year.")],
        runtime=PRODUCTION_LIKE,
        text="how do I look after an upright piano?",
    )
    assert result.status == "completed", result.error
    assert result.reply == "Tune it twice a year." and log.names() == []
    assert result.recoveries == ["finalize_after_repeat"]
    assert len(requests) == 3 and "tools" in requests[1].body and "tools" not in requests[2].body
    assert [(c.name, c.reused) for c in result.tool_calls] == [
        ("piano_tips", False),
        ("piano_tips", True),
    ]
    prompt = requests[2].messages[-1]["content"]
    assert prompt.startswith("That request repeated an earlier one") and "TOOL_NOT_FOUND" in prompt


async def test_without_the_guard_the_made_up_tool_is_refused_each_time(loop_worker, scripted_llm):
    result, requests, _, _ = await run_session(
        loop_worker,
        scripted_llm,
        [MADE_UP, MADE_UP, MADE_UP, reply.text("Tune it twice a year.")],
        runtime=RuntimeConfig(recoveries=["finalize_after_repeat"]),
        text="how do I look after an upright piano?",
    )
    assert result.status == "completed", result.error
    assert [c.reused for c in result.tool_calls] == [False, False, False]
    assert all("tools" in r.body for r in requests)
