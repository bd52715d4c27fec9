"""A person settles a call in doubt (patch ``in-doubt-to-person``): an ``effect="once"``
call whose earlier attempt died inside the body is held like a call awaiting approval,
and the person's answer becomes what the model reads; the body runs again only on "run it
again", and once per such answer. The earlier attempt's death is staged by writing its
marker, as in ``test_once_tools``."""

from __future__ import annotations

import asyncio

import pytest
import pytest_asyncio
from temporalio.client import WorkflowUpdateFailedError

from durable_loop.activities.once_calls import marker_key
from durable_loop.activities.tools import idempotency_key
from durable_loop.core import names
from durable_loop.core.approval_models import PendingToolCall
from durable_loop.store.tool_attempts import ToolAttempts
from durable_loop.testing import reply
from durable_loop.testing.pytest_plugin import running_test_environment
from tests.conftest import settings_for, unique
from tests.workflows.approval_kit import approval_settings, hour
from tests.workflows.proposal_kit import eventually, tool_envelopes
from tests.workflows.test_once_tools import RESULT_SEQ, SEND, Mailer


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def temporal_env():
    """A server of this module's own: skipping past a hold's expiry must not wait on another
    module's leftover workflow task (no worker polls it, so it locks time skipping)."""
    async with running_test_environment() as env:
        yield env


async def held_in_doubt(w, scripted_llm, *, died_runs: int = 1, env=None, ttl_hours=24.0):
    """A session whose ``send_mail`` call c1 is in doubt; ``died_runs`` > 1 stages the
    deaths of the runs a person allows too; with ``env``, holds last ``ttl_hours`` of it."""
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.tool_call("send_mail", SEND, "c1"), reply.text("Done.")])
    key = idempotency_key(names.session_workflow_id(sid), "c1", RESULT_SEQ)
    attempts = ToolAttempts(w.store.db, w.store.engine.dialect.name)
    for rerun in range(died_runs):
        await attempts.begin(marker_key(key, rerun), session_id=sid, call_id="c1", attempt=1)
    settings = (
        approval_settings(scripted_llm, model, env, ttl_hours=ttl_hours)
        if env is not None
        else settings_for(scripted_llm, model)
    )
    await w.sessions.start(sid, settings)
    first = await w.sessions.send(sid, "mail ana", message_id=f"msg-{sid}")
    assert first.status == "awaiting_approval", first
    [held] = first.pending_approvals
    return model, sid, first, held


async def finished(w, scripted_llm, model, sid, message_id):
    final = await w.sessions.message_result(sid, message_id)
    [envelope] = tool_envelopes(scripted_llm.requests(model)[1])
    return final, envelope


async def test_a_call_in_doubt_is_held_and_listed(loop_worker, scripted_llm):
    mailer = Mailer()
    async with loop_worker(mailer.registry()) as w:
        _, sid, _, held = await held_in_doubt(w, scripted_llm)
        listing = await w.sessions.tool_approvals(sid)
        status = await w.sessions.status(sid)
    assert (held.kind, held.tool, held.arguments, held.reruns) == ("in_doubt", "send_mail", SEND, 0)
    assert "attempt 1 stopped inside the tool" in (held.doubt or "")
    assert listing.pending == [held] and status.state == "awaiting_approval"
    assert mailer.sent == []


async def test_it_happened_stores_the_persons_text_as_the_result(loop_worker, scripted_llm):
    mailer = Mailer()
    async with loop_worker(mailer.registry()) as w:
        model, sid, first, _ = await held_in_doubt(w, scripted_llm)
        decided = await w.sessions.tool_calls.answer(
            sid, "c1", "happened", "alice", result="the mail reached ana at 09:12"
        )
        final, envelope = await finished(w, scripted_llm, model, sid, first.message_id)
    assert (decided.status, decided.kind, decided.decided_by) == ("happened", "in_doubt", "alice")
    assert mailer.sent == []  # the body never ran again
    assert envelope["ok"] is True and envelope["data"] == "the mail reached ana at 09:12"
    assert "a person (alice) answered that its effect happened" in envelope["warnings"][0]
    assert final.status == "completed" and [t.ok for t in final.tool_calls] == [True]


async def test_run_it_again_runs_the_body_once(loop_worker, scripted_llm):
    mailer = Mailer()
    async with loop_worker(mailer.registry()) as w:
        model, sid, first, _ = await held_in_doubt(w, scripted_llm)
        decided = await w.sessions.tool_calls.answer(sid, "c1", "run_again", "alice")
        final, envelope = await finished(w, scripted_llm, model, sid, first.message_id)
    assert (decided.status, decided.rerun) == ("run_again", 1)
    assert mailer.sent == ["ana@example.com"]
    assert envelope["ok"] is True and envelope["data"] == "sent to ana@example.com"
    assert final.status == "completed" and final.tool_calls[0].executed


async def test_give_up_tells_the_model_it_did_not_run(loop_worker, scripted_llm):
    mailer = Mailer()
    async with loop_worker(mailer.registry()) as w:
        model, sid, first, _ = await held_in_doubt(w, scripted_llm)
        await w.sessions.tool_calls.answer(sid, "c1", "give_up", "alice", comment="leave it")
        final, envelope = await finished(w, scripted_llm, model, sid, first.message_id)
    assert mailer.sent == []
    [error] = envelope["errors"]
    assert error["code"] == "TOOL_CALL_REJECTED" and "it did not run" in error["message"]
    assert 'Their comment: "leave it"' in error["message"]
    assert final.status == "completed" and final.tool_calls[0].error_codes == ["TOOL_CALL_REJECTED"]


async def test_a_run_allowed_again_that_dies_is_in_doubt_again(loop_worker, scripted_llm):
    """The run a person allowed dies inside the body too: the retry does not run it a
    third time; the call is put to the person again, as another hold."""
    mailer = Mailer()
    async with loop_worker(mailer.registry()) as w:
        model, sid, first, held = await held_in_doubt(w, scripted_llm, died_runs=2)
        await w.sessions.tool_calls.answer(sid, "c1", "run_again", "alice")
        second = await eventually(lambda: asked_again(w, sid))
        with pytest.raises(WorkflowUpdateFailedError) as refused:  # yesterday's answer
            await w.sessions.decide_tool_call(sid, held.decision("run_again", "alice"))
        await w.sessions.tool_calls.answer(sid, "c1", "give_up", "alice")
        final, envelope = await finished(w, scripted_llm, model, sid, first.message_id)
    assert (second.kind, second.reruns) == ("in_doubt", 1)
    assert second.fingerprint != held.fingerprint
    assert refused.value.cause.type == "FINGERPRINT_MISMATCH"
    assert mailer.sent == [] and envelope["errors"][0]["code"] == "TOOL_CALL_REJECTED"
    assert final.status == "completed"


async def asked_again(w, sid: str) -> PendingToolCall | None:
    listing = await w.sessions.tool_approvals(sid)
    return next((p for p in listing.pending if p.reruns == 1), None)


async def test_an_approval_is_no_answer_to_a_call_in_doubt(loop_worker, scripted_llm):
    mailer = Mailer()
    async with loop_worker(mailer.registry()) as w:
        _, sid, _, held = await held_in_doubt(w, scripted_llm)
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await w.sessions.decide_tool_call(sid, held.decision("confirm", "alice"))
        audit = await w.sessions.tool_approvals(sid)
    assert refused.value.cause.type == "INVALID_DECISION"
    assert "is in doubt: answer one of happened, run_again, give_up" in str(refused.value.cause)
    assert [r.error.code for r in audit.refused] == ["INVALID_DECISION"]
    assert mailer.sent == []


async def test_unanswered_a_call_in_doubt_ends_in_doubt(loop_worker, scripted_llm, temporal_env):
    """No one answers before the hold expires: the model reads TOOL_CALL_IN_DOUBT, and the
    body never ran again."""
    mailer = Mailer()
    async with loop_worker(mailer.registry()) as w:
        model, sid, first, _ = await held_in_doubt(w, scripted_llm, env=temporal_env, ttl_hours=2)
        if temporal_env.supports_time_skipping:
            await temporal_env.sleep(3 * hour(temporal_env))
        else:
            await asyncio.sleep(3 * hour(temporal_env).total_seconds())
        final, envelope = await finished(w, scripted_llm, model, sid, first.message_id)
    [error] = envelope["errors"]
    assert error["code"] == "TOOL_CALL_IN_DOUBT"
    assert "No one answered whether it took effect" in error["message"]
    assert final.tool_calls[0].error_codes == ["TOOL_CALL_IN_DOUBT"] and mailer.sent == []
