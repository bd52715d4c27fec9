"""``POST /v1/sessions/{id}/cancel`` and ``interrupt`` on a message: run control over HTTP."""

from __future__ import annotations

import asyncio

from durable_loop.testing import reply
from tests.conftest import settings_for, unique
from tests.service.conftest import ALICE
from tests.service.test_api import code_of
from tests.workflows.test_run_control import SLOW_S, running


async def test_cancel_by_idempotency_key_then_refusals_and_interrupt(
    loop_worker, scripted_llm, service
):
    model, sid = unique("m"), unique("s")
    slow = reply.slow(reply.text("too late"), SLOW_S)
    scripted_llm.script(model, [slow, slow, reply.text("steered")])
    async with loop_worker() as w, service(w) as http:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        messages, cancel = f"/v1/sessions/{sid}/messages", f"/v1/sessions/{sid}/cancel"
        keyed = {**ALICE, "Idempotency-Key": "essay-1"}
        sending = asyncio.create_task(http.post(messages, json={"text": "essay"}, headers=keyed))
        await running(w, sid)
        cancelled = await http.post(cancel, json={"idempotency_key": "essay-1"}, headers=ALICE)
        sent = await sending
        twice = await http.post(cancel, json={"idempotency_key": "essay-1"}, headers=ALICE)
        idle = await http.post(cancel, json={}, headers=ALICE)
        unknown = await http.post(cancel, json={"message_id": "nope"}, headers=ALICE)
        first = asyncio.create_task(http.post(messages, json={"text": "again"}, headers=ALICE))
        await running(w, sid)
        steer = {"text": "shorter", "interrupt": True}
        steered = await http.post(messages, json=steer, headers=ALICE)
        interrupted = await first
    assert cancelled.status_code == 200, cancelled.text
    assert cancelled.json()["status"] == "cancelled"
    assert cancelled.json()["message_id"] == "alice:essay-1"
    assert sent.json() == cancelled.json()
    assert (twice.status_code, code_of(twice)) == (409, "ALREADY_CANCELLED")
    assert (idle.status_code, code_of(idle)) == (409, "NOTHING_RUNNING")
    assert (unknown.status_code, code_of(unknown)) == (404, "UNKNOWN_MESSAGE")
    assert steered.json()["reply"] == "steered"
    assert interrupted.json()["status"] == "cancelled"
