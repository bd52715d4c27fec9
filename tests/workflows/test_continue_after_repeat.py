"""``continue_after_repeat``: a repeat while the request still gives a value no call
carried (a number, a list item) brings the tools back once, with the request quoted; a
second repeat, or a repeat with nothing of that kind left, is finalized as before."""

from __future__ import annotations

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


async def test_a_repeat_with_only_a_step_word_left_is_finalized(loop_worker, scripted_llm):
    result, requests, _, _ = await run_session(
        loop_worker,
        scripted_llm,
        [FIRST, FIRST, reply.text("5.")],
        runtime=ON,
        text="add 2 and 3, then tell me",
    )
    assert result.status == "completed", result.error
    assert result.recoveries == ["finalize_after_repeat"] and len(requests) == 3


async def test_a_repeat_with_only_a_name_left_is_finalized(loop_worker, scripted_llm):
    """A name no call held ("Beta" beside the carried "Alpha") asks for no call of its own
    (patch ``continue-after-repeat-narrowed``)."""
    nap = reply.tool_call("nap", {"seconds": 0, "label": "Alpha"})
    result, requests, log, _ = await run_session(
        loop_worker,
        scripted_llm,
        [nap, nap, reply.text("Napped.")],
        runtime=ON,
        text="Nap with the label Alpha for Beta",
    )
    assert result.status == "completed", result.error
    assert log.names() == ["nap"] and len(requests) == 3
    assert result.recoveries == ["finalize_after_repeat"]
    assert "tools" not in requests[2].body


async def test_a_made_up_tool_repeated_is_finalized_with_a_number_left(loop_worker, scripted_llm):
    """The repeat guard withdrew the tools so that a made-up tool is not called over and
    over; a number left does not bring them back (patch ``continue-after-repeat-narrowed``)."""
    weigh = reply.tool_call("weigh", {"kg": 5})
    result, requests, log, _ = await run_session(
        loop_worker,
        scripted_llm,
        [weigh, weigh, reply.text("I have no scale.")],
        runtime=ON,
        text="weigh 5 kg and 7 kg",
    )
    assert result.status == "completed", result.error
    assert log.names() == [] and len(requests) == 3
    assert result.recoveries == ["finalize_after_repeat"]
    assert "tools" not in requests[2].body
