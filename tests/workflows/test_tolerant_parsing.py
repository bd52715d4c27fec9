"""OpenAI-compatible shape drift is accepted by default (provider normalisation) and refused,
with a coded error, when a session reads replies strictly."""

from __future__ import annotations

from durable_loop.core.config import RuntimeConfig
from durable_loop.testing import Reply, reply
from tests.conftest import settings_for, unique
from tests.workflows.toolkit import ToolLog, recording_tools


def drifting_reply() -> Reply:
    """``tool_calls`` as an object with arguments as an object, then a blank-argument call."""
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": {
            "id": "call_obj",
            "type": "function",
            "function": {"name": "add", "arguments": {"a": 4, "b": 5}},
        },
    }
    return Reply(body={"choices": [{"message": message, "finish_reason": "tool_calls"}]})


async def test_shape_drift_is_normalised_by_default(loop_worker, scripted_llm):
    model, log = unique("drift"), ToolLog()
    scripted_llm.script(
        model,
        [drifting_reply(), reply.tool_calls(("vault", "")), reply.text("9")],
    )
    async with loop_worker(recording_tools(log)) as w:
        sid = unique("s")
        result = await w.sessions.start_and_send(sid, settings_for(scripted_llm, model), "4+5?")
    assert result.status == "completed", result
    assert result.reply == "9"
    assert log.count("add") == 1
    assert log.count("vault") == 1, "blank arguments became {} and the call ran"


async def test_strict_reading_refuses_drift_with_a_code(loop_worker, scripted_llm):
    model, log = unique("strict"), ToolLog()
    scripted_llm.script(model, [drifting_reply()])
    runtime = RuntimeConfig(provider_normalization=False)
    async with loop_worker(recording_tools(log)) as w:
        sid = unique("s")
        result = await w.sessions.start_and_send(
            sid, settings_for(scripted_llm, model, runtime=runtime), "4+5?"
        )
    assert result.status == "failed"
    assert result.error is not None and result.error.code == "PROVIDER_BAD_RESPONSE"
    assert "assistant_tool_calls_object_to_array" in result.error.message
    assert log.count("add") == 0
