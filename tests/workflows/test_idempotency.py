"""A message id is an idempotency key: resent with the same text it returns the first
reply; reused for another text it is refused with IDEMPOTENCY_KEY_REUSED, whether the
first message is answered, still queued, or answered in an earlier run."""

from __future__ import annotations

import pytest
from temporalio.client import WorkflowUpdateFailedError

from durable_loop.client.refusals import refusal_of
from durable_loop.core.config import RuntimeConfig
from durable_loop.core.errors import ErrorCode
from durable_loop.testing import reply
from tests.conftest import settings_for, unique
from tests.workflows.test_session import wait_until


async def refused_code(call) -> ErrorCode | None:
    with pytest.raises(WorkflowUpdateFailedError) as caught:
        await call
    return refusal_of(caught.value).code


async def seen_post(sessions, sid: str) -> bool:
    status = await sessions.status(sid)
    return bool(status.queued_messages or status.messages_done or status.state == "running")


async def test_a_reused_message_id_with_another_text_is_refused(loop_worker, scripted_llm):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.text("first answer"), reply.text("never sent")])
    async with loop_worker() as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        first = await w.sessions.send(sid, "pay 10 EUR", message_id="order-1")
        code = await refused_code(w.sessions.send(sid, "pay 99 EUR", message_id="order-1"))
        again = await w.sessions.send(sid, "pay 10 EUR", message_id="order-1")
        status = await w.sessions.status(sid)
    assert code is ErrorCode.IDEMPOTENCY_KEY_REUSED
    assert first == again and first.reply == "first answer"
    assert status.messages_done == 1 and status.queued_messages == 0
    assert len(scripted_llm.requests(model)) == 1


async def test_a_queued_message_id_reused_with_another_text_is_refused(loop_worker, scripted_llm):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.text("posted answer")])
    async with loop_worker() as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        await w.sessions.post(sid, "a note", message_id="note-1")
        # The server may hand the workflow an Update before a Signal sent earlier: wait
        # until the session has seen the post, so the send below reuses a known id.
        await wait_until(lambda: seen_post(w.sessions, sid))
        code = await refused_code(w.sessions.send(sid, "another note", message_id="note-1"))
        joined = await w.sessions.send(sid, "a note", message_id="note-1")
    assert code is ErrorCode.IDEMPOTENCY_KEY_REUSED
    assert joined.reply == "posted answer" and joined.message_id == "note-1"
    assert [r.messages[-1]["content"] for r in scripted_llm.requests(model)] == ["a note"]


async def test_the_key_is_remembered_across_continue_as_new(loop_worker, scripted_llm):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [], then=lambda request: reply.text(f"n={len(request.messages)}"))
    runtime = RuntimeConfig(continue_as_new_after_events=200)
    async with loop_worker() as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=runtime))
        for i in range(30):
            await w.sessions.send(sid, f"message {i}", message_id=f"k{i}")

        async def moved_on():
            status = await w.sessions.status(sid)
            return status if status.run_index >= 1 else None

        status = await wait_until(moved_on)
        last = f"k{29}"
        code = await refused_code(w.sessions.send(sid, "changed", message_id=last))
        same = await w.sessions.send(sid, "message 29", message_id=last)
    assert status.messages_done == 30
    assert code is ErrorCode.IDEMPOTENCY_KEY_REUSED
    assert same.message_id == last and same.status == "completed"
    assert len(scripted_llm.requests(model)) == 30
