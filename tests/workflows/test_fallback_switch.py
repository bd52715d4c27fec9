"""Per-session model choice: a mid-session switch by Update, validated before it is recorded."""

from __future__ import annotations

import pytest
from temporalio.client import WorkflowUpdateFailedError

from durable_loop.core.config import RuntimeConfig
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.errors import ConfigError
from durable_loop.testing import reply
from durable_loop.testing import reply_anthropic as anthropic
from durable_loop.testing.history import EventType, events_of
from tests.conftest import FAST_RETRY, settings_for, unique
from tests.workflows.toolkit import ToolLog, recording_tools


def claude(scripted_llm, model: str) -> LlmEndpoint:
    return LlmEndpoint(
        provider="anthropic",
        model=model,
        base_url=scripted_llm.base_url,
        timeout_s=10.0,
        retry=FAST_RETRY,
    )


async def test_switching_model_applies_from_the_next_message(loop_worker, scripted_llm):
    first, second, sid, log = unique("gpt"), unique("claude"), unique("s"), ToolLog()
    scripted_llm.script(first, [reply.tool_call("add", {"a": 2, "b": 3}), reply.text("5")])
    scripted_llm.script(second, [anthropic.text("Still 5.")])
    async with loop_worker(recording_tools(log)) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, first))
        one = await w.sessions.send(sid, "2+3?")
        switched = await w.sessions.switch_model(sid, claude(scripted_llm, second))
        status = await w.sessions.status(sid)
        two = await w.sessions.send(sid, "and again?")

    assert (one.model, two.model) == (first, second)
    assert (switched.previous_model, switched.model) == (first, second)
    assert status.model == second
    (request,) = scripted_llm.requests(second)
    assert request.path == "/v1/messages"
    turns = request.body["messages"]
    assert [t["role"] for t in turns] == ["user", "assistant", "user", "assistant", "user"]
    assert turns[1]["content"][0]["type"] == "tool_use"
    assert turns[2]["content"][0]["type"] == "tool_result"
    assert turns[-1]["content"] == [{"type": "text", "text": "and again?"}]


async def test_a_switch_the_session_could_not_run_is_rejected_before_history(
    loop_worker, scripted_llm
):
    model, sid = unique("m"), unique("s")
    enforced = RuntimeConfig(tool_use_mode="enforced")
    async with loop_worker() as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=enforced))
        with pytest.raises(WorkflowUpdateFailedError) as unknown:
            await w.sessions.switch_model(sid, LlmEndpoint(provider="cohere", model="x"))
        with pytest.raises(WorkflowUpdateFailedError) as unreliable:
            await w.sessions.switch_model(sid, LlmEndpoint(model="qwen2.5-coder-local"))
        status = await w.sessions.status(sid)
        (history,) = await w.histories(sid)

    assert "CONFIG_ERROR" in str(unknown.value.cause) and "cohere" in str(unknown.value.cause)
    assert "tool_use_mode=enforced" in str(unreliable.value.cause)
    assert status.model == model
    accepted = events_of(history, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED)
    assert accepted == []


async def test_starting_enforced_on_an_unreliable_model_is_refused(loop_worker, scripted_llm):
    settings = settings_for(
        scripted_llm, "qwen2.5-coder-local", runtime=RuntimeConfig(tool_use_mode="enforced")
    )
    async with loop_worker() as w:
        with pytest.raises(ConfigError, match="allow_enforced_on_unreliable_model"):
            await w.sessions.start(unique("s"), settings)
        with pytest.raises(ConfigError):
            await w.sessions.start_and_send(unique("s"), settings, "hi")
