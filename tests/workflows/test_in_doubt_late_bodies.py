"""A once body that ignores its timeout and outlives its activity (patch
``in-doubt-to-person``): the call goes in doubt and a person answers it. Whenever the body
then returns, before the answer or after it, its result is discarded: the model reads the
person's answer, the store holds it, the body ran once, and the audit log has a row for the
discarded body (never its result) beside the answer's, which says no body settled the call."""

from __future__ import annotations

import asyncio
import json

import pytest

from durable_loop.activities.tools import idempotency_key
from durable_loop.core import names
from durable_loop.store.tool_attempts import NO_BODY, ToolAttempts
from durable_loop.store.workspace import WorkspaceStore
from durable_loop.testing import reply
from tests.conftest import settings_for, unique
from tests.workflows.proposal_kit import eventually, tool_envelopes
from tests.workflows.test_in_doubt_holds import StuckMailer
from tests.workflows.test_once_tools import RESULT_SEQ, SEND

WHEN_IT_HAPPENED = "the mail reached ana at 09:12"


async def late_body_finished(w, sid: str, mailer: StuckMailer) -> None:
    """Until the late body returned and its activity stored or discarded its result."""
    await eventually(lambda: asyncio.sleep(0, mailer.returned.is_set()))
    key = idempotency_key(names.session_workflow_id(sid), "c1", RESULT_SEQ)
    attempts = ToolAttempts(w.store.db, w.store.engine.dialect.name)

    async def settled():
        by = await attempts.settled_by(key)
        if by is None:
            return None
        return True if by == NO_BODY else await w.store.get(sid, RESULT_SEQ)

    await eventually(settled)


async def audit_rows(w, sid: str) -> list:
    """The session's tool rows, once the discarded body's row is there."""
    audit = WorkspaceStore(w.store.db)

    async def with_discarded():
        rows = [r for r in await audit.audit(sid) if r.target == "tool"]
        return rows if any(r.op == "discard" for r in rows) else None

    return await eventually(with_discarded, timeout_s=60.0)


@pytest.mark.parametrize(
    ("answer", "attempts", "released"),
    [
        ("give_up", 1, "after the answer"),
        ("give_up", 1, "before the answer"),
        ("happened", 1, "after the answer"),
        ("give_up", 2, "before the answer"),
    ],
    ids=["give-up", "give-up-body-back-first", "happened", "give-up-after-a-retry"],
)
async def test_a_late_body_does_not_overwrite_the_persons_answer(
    loop_worker, scripted_llm, answer: str, attempts: int, released: str
):
    """About 10 s of real time each: the activity's timeout is the tool's plus slack."""
    mailer = StuckMailer(attempts=attempts)
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.tool_call("send_mail", SEND, "c1"), reply.text("Done.")])
    result = WHEN_IT_HAPPENED if answer == "happened" else None
    async with loop_worker(mailer.registry()) as w:
        try:
            await w.sessions.start(sid, settings_for(scripted_llm, model))
            first = await w.sessions.send(sid, "mail ana")
            assert first.status == "awaiting_approval", first
            if released == "before the answer":
                mailer.release.set()
                await late_body_finished(w, sid, mailer)
            await w.sessions.tool_calls.answer(sid, "c1", answer, "alice", result=result)
            mailer.release.set()
            final = await w.sessions.message_result(sid, first.message_id)
            await late_body_finished(w, sid, mailer)
            stored = await w.store.get(sid, RESULT_SEQ)
            rows = await audit_rows(w, sid)
            listing = await w.sessions.tool_approvals(sid)
        finally:
            mailer.release.set()
    [envelope] = tool_envelopes(scripted_llm.requests(model)[1])
    assert mailer.started == [1]  # the body ran once
    assert stored is not None and stored.message.envelope is not None
    assert json.loads(stored.message.envelope.to_content()) == envelope  # what the model read
    assert [(d.call_id, d.status) for d in listing.decided] == [
        ("c1", "given_up" if answer == "give_up" else "happened")
    ]
    [decision] = [r for r in rows if r.op != "discard"]
    [discarded] = [r for r in rows if r.op == "discard"]
    assert decision.value["settled_by"] == discarded.value["settled_by"] == "no body (in doubt)"
    assert (discarded.call_id, discarded.path, discarded.value["attempt"]) == ("c1", "send_mail", 1)
    assert "result discarded" in (discarded.comment or "")
    assert "sent to" not in str(discarded.value) + (discarded.comment or "")
    if answer == "give_up":
        assert envelope["ok"] is False and envelope["errors"][0]["code"] == "TOOL_CALL_REJECTED"
        assert final.tool_calls[0].error_codes == ["TOOL_CALL_REJECTED"]
    else:
        assert envelope["ok"] is True and envelope["data"] == WHEN_IT_HAPPENED
        assert final.tool_calls[0].ok
