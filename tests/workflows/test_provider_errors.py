"""Provider failures: what retries (and how long it waits), what fails fast, and how."""

from __future__ import annotations

from durable_loop.core import names
from durable_loop.testing import reply
from durable_loop.testing.history import EventType, events_of
from tests.conftest import settings_for, unique
from tests.workflows.toolkit import ToolLog, recording_tools


def llm_activity_events(history):
    """(scheduled, started, completed-or-failed) events of every llm_turn activity."""
    scheduled = {
        e.event_id: e
        for e in events_of(history, EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
        if e.activity_task_scheduled_event_attributes.activity_type.name == names.LLM_TURN
    }
    started = {
        e.activity_task_started_event_attributes.scheduled_event_id: e
        for e in events_of(history, EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED)
    }
    closed = {}
    for e in history.events:
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            closed[e.activity_task_completed_event_attributes.scheduled_event_id] = e
        elif e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED:
            closed[e.activity_task_failed_event_attributes.scheduled_event_id] = e
    return [(s, started.get(i), closed.get(i)) for i, s in scheduled.items()]


async def test_429_is_retried_after_the_retry_after_delay(loop_worker, scripted_llm):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.error(429, "slow down", retry_after=1.5), reply.text("ok")])
    async with loop_worker() as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        result = await w.sessions.send(sid, "hi")
        (history,) = await w.histories(sid)

    assert result.status == "completed" and result.reply == "ok"
    first, second = scripted_llm.requests(model)
    assert second.received_at - first.received_at >= 1.4
    ((scheduled, started, completed),) = llm_activity_events(history)
    assert started.activity_task_started_event_attributes.attempt == 2
    assert completed.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED
    waited = completed.event_time.ToDatetime() - scheduled.event_time.ToDatetime()
    assert waited.total_seconds() >= 1.5


async def test_401_fails_fast_and_the_session_takes_the_next_message(loop_worker, scripted_llm):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.error(401, "invalid api key"), reply.text("welcome back")])
    async with loop_worker() as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        failed = await w.sessions.send(sid, "hi")
        assert len(scripted_llm.requests(model)) == 1
        status = await w.sessions.status(sid)
        recovered = await w.sessions.send(sid, "hi again")

    assert failed.status == "failed" and failed.error is not None
    assert failed.error.code == "PROVIDER_AUTH"
    assert "HTTP 401" in failed.error.message and "invalid api key" in failed.error.message
    assert "API key" in failed.error.message
    assert status.state == "idle" and status.messages_done == 1
    assert recovered.status == "completed" and recovered.reply == "welcome back"
    second = scripted_llm.requests(model)[1]
    assert [m["content"] for m in second.messages if m["role"] == "user"] == ["hi", "hi again"]


async def test_400_fails_fast_as_a_bad_request(loop_worker, scripted_llm):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.error(400, "unknown parameter: foo")])
    async with loop_worker() as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        result = await w.sessions.send(sid, "hi")
    assert result.error is not None and result.error.code == "PROVIDER_BAD_REQUEST"
    assert "unknown parameter: foo" in result.error.message
    assert len(scripted_llm.requests(model)) == 1


async def test_a_request_longer_than_the_context_fails_fast_and_says_what_helps(
    loop_worker, scripted_llm
):
    """llama.cpp's refusal, as ``durable-loop local-llm`` at its default 4,096 tokens gave it
    to BFCL multi_turn_base's longer tool lists."""
    model, sid = unique("m"), unique("s")
    refusal = "request (7412 tokens) exceeds the available context size (4096 tokens)"
    scripted_llm.script(model, [reply.error(400, refusal), reply.text("short enough")])
    async with loop_worker() as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        failed = await w.sessions.send(sid, "hi")
        recovered = await w.sessions.send(sid, "hi again")
    assert failed.error is not None and failed.error.code == "PROVIDER_CONTEXT_EXCEEDED"
    assert refusal in failed.error.message and "--ctx-size" in failed.error.message
    assert "context_window" in failed.error.message
    assert recovered.reply == "short enough" and len(scripted_llm.requests(model)) == 2


async def test_llm_timeout_is_retried(loop_worker, scripted_llm):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.slow(reply.text("too late"), 2.5), reply.text("on time")])
    async with loop_worker() as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, timeout_s=1.0))
        result = await w.sessions.send(sid, "hi")
        (history,) = await w.histories(sid)
        stored = await w.store.read(sid)

    assert result.status == "completed" and result.reply == "on time"
    assert len(scripted_llm.requests(model)) == 2
    ((_, started, _),) = llm_activity_events(history)
    assert started.activity_task_started_event_attributes.attempt == 2
    assert stored[1].meta["attempt"] == 2


async def test_html_error_page_with_5xx_is_retried(loop_worker, scripted_llm):
    model, sid = unique("m"), unique("s")
    page = "<html><body><h1>502 Bad Gateway</h1></body></html>"
    scripted_llm.script(model, [reply.raw(502, page), reply.text("fine now")])
    async with loop_worker() as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        result = await w.sessions.send(sid, "hi")
    assert result.status == "completed" and result.reply == "fine now"
    assert len(scripted_llm.requests(model)) == 2


async def test_html_page_with_200_is_a_bad_response(loop_worker, scripted_llm):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.raw(200, "<html><body>Login required</body></html>")])
    async with loop_worker() as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        result = await w.sessions.send(sid, "hi")
    assert result.error is not None and result.error.code == "PROVIDER_BAD_RESPONSE"
    assert "not JSON" in result.error.message and "Login required" in result.error.message
    assert len(scripted_llm.requests(model)) == 1


async def test_truncated_json_is_a_bad_response(loop_worker, scripted_llm):
    model, sid, log = unique("m"), unique("s"), ToolLog()
    truncated = '{"choices": [{"message": {"role": "assistant", "tool_calls": [{"id": "c'
    scripted_llm.script(model, [reply.raw(200, truncated, "application/json")])
    async with loop_worker(recording_tools(log)) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        result = await w.sessions.send(sid, "hi")
        stored = await w.store.read(sid)
    assert result.error is not None and result.error.code == "PROVIDER_BAD_RESPONSE"
    assert len(scripted_llm.requests(model)) == 1
    assert [m.message.role for m in stored] == ["user"]
    assert log.executions == []
