"""Streaming the assistant text to a caller through the store, not through history."""

from __future__ import annotations

from pydantic import BaseModel

from durable_loop.core.config import RuntimeConfig
from durable_loop.store.stream import StreamStore
from durable_loop.testing import reply, reply_stream
from durable_loop.testing.history import EventType, events_of, history_bytes
from tests.conftest import settings_for, unique
from tests.workflows.toolkit import ToolLog, recording_tools

PIECES = ("It ", "is ", "fi", "ve.")


def activity_trail(history) -> list[tuple[str, int]]:
    """(activity type, result size in bytes) for every completed activity."""
    names = {
        e.event_id: e.activity_task_scheduled_event_attributes.activity_type.name
        for e in events_of(history, EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
    }
    trail = []
    for e in events_of(history, EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED):
        attrs = e.activity_task_completed_event_attributes
        size = sum(len(p.data) for p in attrs.result.payloads)
        trail.append((names[attrs.scheduled_event_id], size))
    return trail


async def test_streamed_reply_reaches_the_caller_and_history_stays_the_same(
    loop_worker, scripted_llm
):
    model, sid, log = unique("m"), unique("s"), ToolLog()
    scripted_llm.script(
        model,
        [
            reply_stream.tool_call("add", ['{"a": ', "2, ", '"b": 3}']),
            reply_stream.text(*PIECES),
        ],
    )
    runtime = RuntimeConfig(stream_replies=True)
    async with loop_worker(recording_tools(log)) as w:
        chunks = StreamStore(w.store.db)
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=runtime))
        events = [e async for e in w.sessions.send_streaming(sid, "2+3?", chunks, poll_s=0.01)]
        stored = await w.store.read(sid)
        rows = await chunks.read(sid)
        (streamed_history,) = await w.histories(sid)

    *texts, end = events
    assert end.kind == "result" and end.result.status == "completed"
    assert end.result.reply == "It is five." and log.names() == ["add"]
    assert "".join(e.text for e in texts) == "It is five."
    assert {e.seq for e in texts} == {end.result.reply_seq}
    assert stored[1].message.tool_calls[0].arguments == '{"a": 2, "b": 3}'
    assert stored[3].meta["streamed"] is True
    assert [r.done for r in rows if r.seq == 3][-1] is True
    first = scripted_llm.requests(model)[0]
    assert first.body["stream"] is True and first.body["stream_options"] == {"include_usage": True}

    # The same conversation without streaming records the same activities, results alike.
    plain_model, plain_sid = unique("m"), unique("s")
    scripted_llm.script(
        plain_model, [reply.tool_call("add", {"a": 2, "b": 3}), reply.text("It is five.")]
    )
    async with loop_worker(recording_tools(ToolLog())) as w:
        await w.sessions.start(plain_sid, settings_for(scripted_llm, plain_model))
        await w.sessions.send(plain_sid, "2+3?")
        (plain_history,) = await w.histories(plain_sid)
    streamed, plain = activity_trail(streamed_history), activity_trail(plain_history)
    assert [name for name, _ in streamed] == [name for name, _ in plain]
    assert all(abs(a - b) <= 20 for (_, a), (_, b) in zip(streamed, plain, strict=True))
    assert b"chat.completion.chunk" not in history_bytes(streamed_history)


async def test_a_server_answering_without_events_still_works(loop_worker, scripted_llm):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.text("plain")])
    async with loop_worker() as w:
        chunks = StreamStore(w.store.db)
        runtime = RuntimeConfig(stream_replies=True)
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=runtime))
        events = [e async for e in w.sessions.send_streaming(sid, "hi", chunks, poll_s=0.01)]
    assert [e.kind for e in events] == ["result"] and events[0].result.reply == "plain"


class Sum(BaseModel):
    total: int


async def test_a_typed_answer_streams_and_arrives_parsed(loop_worker, scripted_llm):
    """``send_streaming`` and ``send_with_progress`` take ``output_type`` as ``send`` does:
    the first streamed answer is not valid and is sent back, the second arrives parsed."""
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model,
        [
            reply_stream.text("The total ", "is five."),
            reply_stream.text('{"total": ', "5}"),
            reply_stream.text('{"total": ', "6}"),
        ],
    )
    runtime = RuntimeConfig(stream_replies=True)
    async with loop_worker(recording_tools(ToolLog())) as w:
        chunks = StreamStore(w.store.db)
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=runtime))
        streamed = [
            e async for e in w.sessions.send_streaming(sid, "2+3?", chunks, output_type=Sum)
        ]
        progress = [p async for p in w.sessions.send_with_progress(sid, "3+3?", output_type=Sum)]
    end, last = streamed[-1].result, progress[-1].result
    assert end is not None and end.output_as(Sum) == Sum(total=5)
    assert last is not None and last.output_as(Sum) == Sum(total=6)
    assert any("is five" in e.text for e in streamed if e.kind == "text")
    first = scripted_llm.requests(model)[0]
    assert first.body["response_format"]["json_schema"]["schema"] == Sum.model_json_schema()
