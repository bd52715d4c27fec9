"""``continue_after_repeat``: a repeat while the request still gives a value no call
carried (a number, a list item) brings the tools back once, with the request quoted; a
second repeat, or a repeat with nothing of that kind left, is finalized as before."""

from __future__ import annotations

import pytest

from durable_loop.core.config import RuntimeConfig
from durable_loop.testing import reply
from tests.workflows.test_endings import run_session

ON = RuntimeConfig(
    recoveries=[
        "repeated_call_guard",
        "continue_after_repeat",
        "finalize_after_repeat",
        "finalize_when_done",
    ]
)
FIRST = reply.tool_call("add", {"a": 2, "b": 3})
SECOND = reply.tool_call("add", {"a": 4, "b": 6})


async def test_a_repeat_with_a_value_left_gets_the_tools_back_for_the_next_call(
    loop_worker, scripted_llm
):
    result, requests, log, _ = await run_session(
        loop_worker,
        scripted_llm,
        [FIRST, FIRST, SECOND, reply.text("5 and 10.")],
        runtime=ON,
        text="add 2 and 3, and add 4 and 6",
    )
    assert result.status == "completed", result.error
    assert result.reply == "5 and 10." and log.names() == ["add", "add"]
    assert result.recoveries == ["continue_after_repeat", "finalize_when_done"]
    prompt = requests[2].messages[-1]["content"]
    assert "tools" in requests[2].body and prompt.startswith("That call was already made")
    assert '"add 2 and 3, and add 4 and 6"' in prompt
    assert "tools" not in requests[3].body


async def test_a_second_repeat_is_finalized(loop_worker, scripted_llm):
    result, requests, log, _ = await run_session(
        loop_worker,
        scripted_llm,
        [FIRST, FIRST, FIRST, reply.text("5.")],
        runtime=ON,
        text="add 2 and 3, and add 4 and 6",
    )
    assert result.status == "completed", result.error
    assert log.names() == ["add"] and len(requests) == 4
    assert result.recoveries == ["continue_after_repeat", "finalize_after_repeat"]
    assert "tools" not in requests[3].body


NAP = reply.tool_call("nap", {"seconds": 0, "label": "Alpha"})
WEIGH = reply.tool_call("weigh", {"kg": 5})


@pytest.mark.parametrize(
    ("call", "text", "ran"),
    [
        pytest.param(FIRST, "add 2 and 3, then tell me", ["add"], id="only-a-step-word-left"),
        # A name no call held ("Beta" beside the carried "Alpha") asks for no call of its
        # own (patch continue-after-repeat-narrowed).
        pytest.param(NAP, "Nap with the label Alpha for Beta", ["nap"], id="only-a-name-left"),
        # The guard withdrew the tools so that a made-up tool is not called over and over;
        # a number left does not bring them back (patch continue-after-repeat-narrowed).
        pytest.param(WEIGH, "weigh 5 kg and 7 kg", [], id="a-made-up-tool-repeated"),
    ],
)
async def test_a_repeat_with_nothing_to_continue_is_finalized(
    loop_worker, scripted_llm, call, text, ran
):
    result, requests, log, _ = await run_session(
        loop_worker, scripted_llm, [call, call, reply.text("Done.")], runtime=ON, text=text
    )
    assert result.status == "completed", result.error
    assert log.names() == ran and len(requests) == 3
    assert result.recoveries == ["finalize_after_repeat"]
    assert "tools" not in requests[2].body
