"""The fallback chain: a turn that fails for good on one model runs on the next."""

from __future__ import annotations

import json

from durable_loop.core import names
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.retry import RetrySettings
from durable_loop.testing import reply
from durable_loop.testing import reply_anthropic as anthropic
from durable_loop.testing.history import EventType, events_of
from tests.conftest import FAST_RETRY, settings_for, unique
from tests.workflows.toolkit import ToolLog, recording_tools


def endpoint(scripted_llm, model: str, provider: str = "openai", **kw) -> LlmEndpoint:
    return LlmEndpoint(
        provider=provider,
        model=model,
        base_url=scripted_llm.base_url,
        timeout_s=10.0,
        retry=kw.pop("retry", FAST_RETRY),
        **kw,
    )


def llm_summaries(history) -> list[str]:
    out = []
    for event in events_of(history, EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED):
        attrs = event.activity_task_scheduled_event_attributes
        if attrs.activity_type.name == names.LLM_TURN:
            out.append(json.loads(event.user_metadata.summary.data))
    return out


async def test_non_retryable_error_falls_back_to_the_next_model(loop_worker, scripted_llm):
    primary, backup, sid = unique("primary"), unique("backup"), unique("s")
    scripted_llm.script(primary, [reply.error(400, "context length exceeded")])
    scripted_llm.script(backup, [reply.text("answered by the backup")])
    settings = settings_for(scripted_llm, primary).model_copy(
        update={"fallback_llms": [endpoint(scripted_llm, backup)]}
    )
    async with loop_worker() as w:
        await w.sessions.start(sid, settings)
        result = await w.sessions.send(sid, "hi")
        stored = await w.store.read(sid)
        (history,) = await w.histories(sid)

    assert result.status == "completed" and result.reply == "answered by the backup"
    assert result.model == backup and result.turns == 1
    (record,) = result.fallbacks
    assert (record.turn, record.failed_model, record.next_model) == (1, primary, backup)
    assert record.error.code == "PROVIDER_BAD_REQUEST"
    assert "context length exceeded" in record.error.message
    assert len(scripted_llm.requests(primary)) == 1
    assert [m.seq for m in stored] == [0, 1]  # same assistant seq on the backup
    assert stored[1].meta["model"] == backup and stored[1].meta["fallback_from"] == [primary]
    summaries = llm_summaries(history)
    assert summaries[0] == f"llm: {primary} turn 1"
    assert summaries[1] == f"llm: {backup} turn 1 (fallback after {primary})"


async def test_exhausted_retries_fall_back_mid_loop_across_providers(loop_worker, scripted_llm):
    primary, backup, sid, log = unique("primary"), unique("claude"), unique("s"), ToolLog()
    two_attempts = RetrySettings(initial_interval_s=0.1, maximum_interval_s=0.2, maximum_attempts=2)
    scripted_llm.script(
        primary, [reply.tool_call("add", {"a": 2, "b": 3}), reply.error(503), reply.error(503)]
    )
    scripted_llm.script(backup, [anthropic.text("It is 5.")])
    settings = settings_for(scripted_llm, primary, retry=two_attempts).model_copy(
        update={"fallback_llms": [endpoint(scripted_llm, backup, provider="anthropic")]}
    )
    async with loop_worker(recording_tools(log)) as w:
        await w.sessions.start(sid, settings)
        result = await w.sessions.send(sid, "2+3?")

    assert result.status == "completed" and result.reply == "It is 5."
    assert log.names() == ["add"] and len(scripted_llm.requests(primary)) == 3
    (record,) = result.fallbacks
    assert record.turn == 2 and record.error.code == "HTTP_503"
    (handoff,) = scripted_llm.requests(backup)
    turns = handoff.body["messages"]
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert turns[1]["content"][0]["type"] == "tool_use"
    assert turns[2]["content"][0]["tool_use_id"] == turns[1]["content"][0]["id"]


async def test_when_every_model_fails_the_message_fails_with_the_last_error(
    loop_worker, scripted_llm
):
    primary, backup, sid = unique("primary"), unique("backup"), unique("s")
    scripted_llm.script(primary, [reply.error(401, "bad key")])
    scripted_llm.script(backup, [reply.error(400, "bad request")])
    settings = settings_for(scripted_llm, primary).model_copy(
        update={"fallback_llms": [endpoint(scripted_llm, backup)]}
    )
    async with loop_worker() as w:
        await w.sessions.start(sid, settings)
        result = await w.sessions.send(sid, "hi")
        status = await w.sessions.status(sid)
    assert result.status == "failed" and result.error.code == "PROVIDER_BAD_REQUEST"
    assert [f.error.code for f in result.fallbacks] == ["PROVIDER_AUTH"]
    assert status.state == "idle"


async def test_without_a_chain_a_failure_is_not_retried_elsewhere(loop_worker, scripted_llm):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.error(400, "nope")])
    async with loop_worker() as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        result = await w.sessions.send(sid, "hi")
    assert result.error.code == "PROVIDER_BAD_REQUEST" and result.fallbacks == []
