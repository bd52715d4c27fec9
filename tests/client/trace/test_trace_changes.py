"""Cancels (by Update, by Signal, by an interrupting message) and a model switch in the
trace; cancelled messages counted as cancelled. An Update this version does not know, and
a failed one, are shown (by name, and as a refusal with its code) instead of stopping
the trace."""

from __future__ import annotations

import asyncio

from temporalio.api.enums.v1 import EventType

from durable_loop.client.trace import build_trace, decode_run
from durable_loop.client.trace.entries import (
    CancelEntry,
    ModelSwitchEntry,
    RefusalEntry,
    UnknownUpdateEntry,
)
from durable_loop.client.trace.fetch import load_trace
from durable_loop.core import names
from durable_loop.core.errors import ErrorCode
from durable_loop.testing import reply
from tests.client.trace.kit import rendered
from tests.conftest import settings_for, unique
from tests.workflows.test_fallback import endpoint
from tests.workflows.test_run_control import SLOW_S, running


async def cancelled_session(w, scripted_llm, store_url):
    """Five messages: cancelled by Update, by Signal, by an interrupting message (which
    completes), then one more after a model switch."""
    model, other, sid = unique("m"), unique("o"), unique("s")
    slow = reply.slow(reply.text("never"), SLOW_S)
    scripted_llm.script(model, [slow, slow, slow, reply.text("fresh")])
    scripted_llm.script(other, [reply.text("from the other model")])
    sessions = w.sessions
    await sessions.start(sid, settings_for(scripted_llm, model))
    results = []
    first = asyncio.create_task(sessions.send(sid, "first"))
    await running(w, sid)
    await sessions.cancel(sid, reason="changed my mind")
    results.append(await first)
    second = asyncio.create_task(sessions.send(sid, "second"))
    await running(w, sid)
    await sessions.post_cancel(sid, reason="too slow")
    results.append(await second)
    third = asyncio.create_task(sessions.send(sid, "third"))
    await running(w, sid)
    fourth = await sessions.send(sid, "fourth", interrupt=True)
    results += [await third, fourth]
    await sessions.switch_model(sid, endpoint(scripted_llm, other))
    results.append(await sessions.send(sid, "fifth"))
    trace = await load_trace(sessions.client, sid, db_url=store_url)
    return sid, model, other, results, trace


async def test_cancels_and_a_model_switch_are_entries_and_cancelled_counts_as_cancelled(
    loop_worker, scripted_llm, store_url
):
    async with loop_worker() as w:
        _, model, other, results, trace = await cancelled_session(w, scripted_llm, store_url)
    assert [r.status for r in results] == [
        "cancelled",
        "cancelled",
        "cancelled",
        "completed",
        "completed",
    ]
    assert [(m.message_id, m.status) for m in trace.by_message] == [
        (r.message_id, r.status) for r in results
    ]
    by_update, by_signal, switched = trace.entries
    assert isinstance(by_update, CancelEntry)
    assert (by_update.via, by_update.name, by_update.reason, by_update.status) == (
        "update",
        "cancel_message",
        "changed my mind",
        "cancelled",
    )
    assert (by_update.message_id, by_update.message) == (results[0].message_id, 0)
    assert isinstance(by_signal, CancelEntry)
    assert (by_signal.via, by_signal.reason, by_signal.status) == ("signal", "too slow", None)
    assert by_signal.message == 1  # it came while the second message ran
    assert isinstance(switched, ModelSwitchEntry)
    assert (switched.previous_model, switched.model) == (model, other)
    assert (switched.message, switched.after_message) == (None, 3)
    assert trace.by_message[4].reply is not None
    assert trace.by_message[4].reply.text == "from the other model"

    text = rendered(trace)
    assert "messages: 5 (2 completed, 0 failed, 3 cancelled)" in text
    assert f"cancel of message {results[0].message_id}: " in text
    assert '"changed my mind" → cancelled  [update cancel_message]' in text
    assert 'cancel of the running message: "too slow"  [signal cancel_message]' in text
    assert f"model switched: {model} → {other}  [update switch_model]" in text
    assert "interrupted by a new message" in text


async def test_an_unknown_or_failed_update_does_not_stop_the_trace(
    loop_worker, scripted_llm, store_url
):
    """A history from another version: the model switch's Update renamed, the cancel's
    Update failed with a code."""
    async with loop_worker() as w:
        sid, _, _, results, _ = await cancelled_session(w, scripted_llm, store_url)
        histories = await w.histories(sid)
        stored = await w.store.read(sid)
    [history] = histories
    accepted = [
        e.workflow_execution_update_accepted_event_attributes
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED
    ]
    renamed = next(a for a in accepted if a.accepted_request.input.name == "switch_model")
    renamed.accepted_request.input.name = "set_mood"
    cancel = next(a for a in accepted if a.accepted_request.input.name == "cancel_message")
    completed = next(
        e.workflow_execution_update_completed_event_attributes
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED
        and e.workflow_execution_update_completed_event_attributes.meta.update_id
        == cancel.accepted_request.meta.update_id
    )
    completed.outcome.ClearField("success")
    completed.outcome.failure.message = "ALREADY_CANCELLED: message m is already cancelled"
    completed.outcome.failure.application_failure_info.type = ErrorCode.ALREADY_CANCELLED

    runs = [decode_run(history.events, history.run_id, 0)]
    trace = build_trace(sid, names.session_workflow_id(sid), runs, stored)
    refused, _, unknown = trace.entries
    assert isinstance(refused, RefusalEntry)
    assert (refused.via, refused.name, refused.error.code, refused.error.message) == (
        "update",
        "cancel_message",
        "ALREADY_CANCELLED",
        "message m is already cancelled",
    )
    assert isinstance(unknown, UnknownUpdateEntry)
    assert (unknown.name, unknown.completed, unknown.error) == ("set_mood", True, None)
    assert [m.status for m in trace.by_message] == [r.status for r in results]
    text = rendered(trace)
    assert "refused cancel of the running message: ALREADY_CANCELLED message m is" in text
    assert "unknown update 'set_mood' (completed)  [update set_mood]" in text
