"""A person's answer to a call in doubt settles the call (the decision-audit activity), so a
late body loses even while its worker does not know that its activity timed out.

The race: the worker's heartbeats do not reach the server (an interceptor drops those of
the tool activity), so the server times the attempt out by its heartbeat timeout while the
worker's own deadline (the start-to-close timeout, measured from the body's start) is far
off and no cancel reaches the body. The call is held in doubt, a person gives up on it, and
only then does the body return: before its worker's deadline, with no cancel, so only the
settlement written with the answer stops its result from counting."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console
from temporalio.worker import (
    ActivityInboundInterceptor,
    ActivityOutboundInterceptor,
    Interceptor,
)

from durable_loop.activities.tools import idempotency_key
from durable_loop.client.workspace import load_workspace
from durable_loop.client.workspace_decisions import decision_lines
from durable_loop.client.workspace_render import audit_table
from durable_loop.core import names
from durable_loop.core.config import RuntimeConfig
from durable_loop.store.tool_attempts import NO_BODY, ToolAttempts
from durable_loop.store.workspace import WorkspaceStore
from durable_loop.testing import reply
from tests.conftest import settings_for, unique
from tests.workflows.proposal_kit import eventually, tool_envelopes
from tests.workflows.test_in_doubt_holds import StuckMailer
from tests.workflows.test_once_tools import RESULT_SEQ, SEND

HEARTBEAT_TIMEOUT_S = 2.0
TOOL_TIMEOUT_S = 40.0
"""The worker's deadline for the body (this + scheduling slack - margin) stays far off."""


class _DroppedHeartbeats(ActivityOutboundInterceptor):
    def heartbeat(self, *details: Any) -> None:
        if self.info().activity_type != names.RUN_TOOL:
            super().heartbeat(*details)


class _Inbound(ActivityInboundInterceptor):
    def init(self, outbound: ActivityOutboundInterceptor) -> None:
        super().init(_DroppedHeartbeats(outbound))


class LostToolHeartbeats(Interceptor):
    """The tool activity's heartbeats never reach the server (a network fault)."""

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _Inbound(next)


def audit_lines(view) -> list[str]:
    out = io.StringIO()
    Console(file=out, width=400).print(audit_table(view))
    return out.getvalue().splitlines()


async def test_a_body_that_returns_after_the_answer_loses_to_it(
    loop_worker, scripted_llm, store_url
):
    """About 5 s of real time: the heartbeat timeout, the answer, the body's return."""
    mailer = StuckMailer(attempts=1, timeout_s=TOOL_TIMEOUT_S)
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.tool_call("send_mail", SEND, "c1"), reply.text("Done.")])
    runtime = RuntimeConfig.model_validate(
        {"retries": {"heartbeat_timeout_s": HEARTBEAT_TIMEOUT_S}}
    )
    key = idempotency_key(names.session_workflow_id(sid), "c1", RESULT_SEQ)
    async with loop_worker(mailer.registry(), interceptors=[LostToolHeartbeats()]) as w:
        attempts = ToolAttempts(w.store.db, w.store.engine.dialect.name)
        audit = WorkspaceStore(w.store.db)

        async def discarded():
            return [r for r in await audit.audit(sid) if r.op == "discard"]

        try:
            await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=runtime))
            first = await w.sessions.send(sid, "mail ana")
            assert first.status == "awaiting_approval", first
            unsettled = await attempts.settled_by(key)  # the body runs on, nobody settled
            await w.sessions.tool_calls.answer(sid, "c1", "give_up", "alice")
            await eventually(lambda: _is(attempts.settled_by(key), NO_BODY))
            mailer.release.set()
            final = await w.sessions.message_result(sid, first.message_id)
            [row] = await eventually(discarded)
            stored = await w.store.get(sid, RESULT_SEQ)
            rows = await audit.audit(sid)
        finally:
            mailer.release.set()
    view = await load_workspace(store_url, sid, session_id=sid)
    [envelope] = tool_envelopes(scripted_llm.requests(model)[1])
    assert unsettled is None
    assert mailer.started == [1] and mailer.returned.is_set()
    assert envelope["errors"][0]["code"] == "TOOL_CALL_REJECTED"  # the model read the answer
    assert final.tool_calls[0].error_codes == ["TOOL_CALL_REJECTED"]
    assert stored is not None and stored.message.envelope is not None
    assert stored.message.envelope.error_codes == ["TOOL_CALL_REJECTED"]
    [answer] = [r for r in rows if r.op == "reject"]
    assert (answer.actor, answer.value["answer"]) == ("alice", "given_up")
    assert answer.value["settled_by"] == "no body (in doubt)"
    assert (row.actor, row.path, row.call_id, row.value["attempt"]) == (
        "system:worker",
        "send_mail",
        "c1",
        1,
    )
    assert row.value["settled_by"] == "no body (in doubt)"
    assert "after the call was settled" in (row.comment or "")  # not past its deadline
    assert "sent to" not in str(row.value) + (row.comment or "")  # never the result
    [line] = [line for line in audit_lines(view) if "tool discard send_mail" in line]
    assert "system:worker (system)" in line and "result discarded" in line
    assert [d.text for d in decision_lines(view)] == [
        "alice rejected tool call c1 (send_mail, turn 1)",
        "system:worker discarded the late body's result of tool call c1 (send_mail, turn 1)",
    ]


async def _is(value, expected) -> bool:
    return await value == expected
