"""The session around the loop: signals, idempotent message ids, worker restarts and
continue-as-new."""

from __future__ import annotations

import asyncio
import time

from durable_loop.core.config import RuntimeConfig
from durable_loop.core.registry import ToolContext, ToolRegistry
from durable_loop.testing import reply
from durable_loop.worker.builder import WorkerTuning
from tests.conftest import settings_for, unique
from tests.workflows.toolkit import ToolLog, recording_tools


async def wait_until(predicate, *, timeout_s: float = 15.0):
    deadline = time.monotonic() + timeout_s
    while True:
        value = await predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.05)


async def test_signal_delivered_message_is_processed(loop_worker, scripted_llm):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.text("got your note")])
    async with loop_worker() as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        await w.sessions.post(sid, "a note", message_id="note-1")

        async def done():
            status = await w.sessions.status(sid)
            return status if status.messages_done == 1 else None

        status = await wait_until(done)
    assert status.last_result is not None
    assert status.last_result.message_id == "note-1"
    assert status.last_result.reply == "got your note"
    assert scripted_llm.requests(model)[0].messages[-1]["content"] == "a note"


async def test_same_message_id_runs_once(loop_worker, scripted_llm):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.text("first answer"), reply.text("second answer")])
    async with loop_worker() as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        first = await w.sessions.send(sid, "hello", message_id="msg-1")
        again = await w.sessions.send(sid, "hello", message_id="msg-1")
        await w.sessions.post(sid, "hello", message_id="msg-1")
        concurrent = await asyncio.gather(
            w.sessions.send(sid, "other", message_id="msg-2"),
            w.sessions.send(sid, "other", message_id="msg-2"),
        )
        status = await w.sessions.status(sid)
    assert first == again and first.reply == "first answer"
    assert concurrent[0] == concurrent[1] and concurrent[0].reply == "second answer"
    assert len(scripted_llm.requests(model)) == 2
    assert status.messages_done == 2


async def test_update_with_start_creates_the_session_once(loop_worker, scripted_llm):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.text("one"), reply.text("two")])
    settings = settings_for(scripted_llm, model)
    async with loop_worker() as w:
        first = await w.sessions.start_and_send(sid, settings, "hi")
        second = await w.sessions.start_and_send(sid, settings, "hi again")
        status = await w.sessions.status(sid)
    assert (first.reply, second.reply) == ("one", "two")
    assert status.messages_done == 2 and status.run_index == 0


def restart_tools(log: ToolLog, slow_started: asyncio.Event) -> ToolRegistry:
    registry = recording_tools(log)

    @registry.tool()
    async def slow_step(ctx: ToolContext) -> str:
        """Slow on its first execution only."""
        log.start("slow_step", {}, ctx)
        if log.count("slow_step") == 1:
            slow_started.set()
            await asyncio.sleep(60)
        return "slow done"

    return registry


async def test_restarted_worker_resumes_without_rerunning_completed_tools(
    loop_worker, scripted_llm
):
    model, sid, queue, log = unique("m"), unique("s"), unique("q"), ToolLog()
    slow_started = asyncio.Event()
    scripted_llm.script(
        model,
        [
            reply.tool_call("add", {"a": 20, "b": 22}),
            reply.tool_call("slow_step", {}),
            reply.text("all done"),
        ],
    )
    registry = restart_tools(log, slow_started)
    # Without a workflow cache there is no sticky queue, so the next workflow task goes to
    # the shared queue at once (the time-skipping server never times out a sticky queue).
    no_cache = WorkerTuning(max_cached_workflows=0)
    async with loop_worker(registry, task_queue=queue, tuning=no_cache) as first_worker:
        sessions = first_worker.sessions
        await sessions.start(sid, settings_for(scripted_llm, model))
        pending = asyncio.create_task(sessions.send(sid, "work"))
        await asyncio.wait_for(slow_started.wait(), timeout=15)
    assert not pending.done()
    async with loop_worker(registry, task_queue=queue) as second_worker:
        result = await asyncio.wait_for(pending, timeout=30)
        stored = await second_worker.store.read(sid)

    assert result.status == "completed" and result.reply == "all done", result
    assert log.count("add") == 1
    assert log.count("slow_step") == 2
    assert len(scripted_llm.requests(model)) == 3
    assert [m.message.role for m in stored] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]


async def test_continue_as_new_is_invisible_to_the_caller(loop_worker, scripted_llm):
    model, sid, log = unique("m"), unique("s"), ToolLog()
    messages = 14

    def answer(request):
        last = request.messages[-1]
        if last["role"] == "user":
            return reply.tool_call("add", {"a": len(request.messages), "b": 1})
        return reply.text(f"answer after {len(request.messages)} messages")

    scripted_llm.script(model, [], then=answer)
    runtime = RuntimeConfig(continue_as_new_after_events=200)
    async with loop_worker(recording_tools(log)) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=runtime))
        results = [await w.sessions.send(sid, f"message {i}") for i in range(messages)]
        status = await w.sessions.status(sid)
        tail = await w.sessions.tail(sid, limit=10)
        stored = await w.store.read(sid)
        histories = await w.histories(sid)

    assert all(r.status == "completed" for r in results), [r.error for r in results]
    assert status.run_index >= 1 and len(histories) == status.run_index + 1
    assert status.messages_done == messages
    assert [m.seq for m in stored] == list(range(4 * messages))
    assert status.next_seq == 4 * messages
    assert [e.seq for e in tail.entries] == list(range(4 * messages - 10, 4 * messages))
    assert [r.reply_seq for r in results] == [4 * i + 3 for i in range(messages)]
    assert log.count("add") == messages
    # The model saw the whole conversation across runs.
    last_request = scripted_llm.requests(model)[-1]
    assert len(last_request.messages) == 4 * messages - 1


async def test_continue_as_new_with_updates_waiting_in_the_queue(loop_worker, scripted_llm):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [], then=lambda request: reply.text(f"n={len(request.messages)}"))
    runtime = RuntimeConfig(continue_as_new_after_events=200)
    async with loop_worker() as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=runtime))
        results = []
        for batch in range(4):
            sends = [w.sessions.send(sid, f"m{batch}-{i}") for i in range(8)]
            results += await asyncio.wait_for(asyncio.gather(*sends), timeout=30)
        status = await w.sessions.status(sid)
        stored = await w.store.read(sid)
    assert all(r.status == "completed" for r in results)
    assert status.run_index >= 1 and status.messages_done == 32
    assert [m.seq for m in stored] == list(range(64))
    assert sorted(r.reply_seq for r in results) == list(range(1, 64, 2))


async def test_close_finishes_queued_messages_then_ends(loop_worker, scripted_llm):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.slow(reply.text("one"), 0.3), reply.text("two")])
    async with loop_worker() as w:
        handle = await w.sessions.start(sid, settings_for(scripted_llm, model))
        await w.sessions.post(sid, "first")
        await w.sessions.post(sid, "second")
        await w.sessions.close(sid, reason="user left")
        end = await asyncio.wait_for(handle.result(), timeout=15)
    assert (end.reason, end.messages_done, end.turns_total) == ("user left", 2, 2)
    assert len(scripted_llm.requests(model)) == 2
