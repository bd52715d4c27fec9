"""``effect="once"`` tools: an attempt that died inside the body is never re-run blindly.

The earlier attempt's death is staged by writing its marker (what the activity writes
before the body) into the store before the call; the worker-kill version of the same runs
in ``durable-loop chaos`` (``once_call_worker_killed_in_body``)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import pytest

from durable_loop.activities.tools import idempotency_key
from durable_loop.core import names
from durable_loop.core.registry import Reconciled, ToolContext, ToolRegistry
from durable_loop.core.retry import RetrySettings
from durable_loop.store.tool_attempts import ToolAttempts
from durable_loop.testing import reply
from tests.conftest import settings_for, unique
from tests.workflows.proposal_kit import tool_envelopes

SEND = {"to": "ana@example.com", "text": "hello"}
RESULT_SEQ = 2  # user message 0, the assistant's call 1, its result 2


@dataclass
class Mailer:
    """A ``send_mail`` that cannot take an idempotency key; counts the bodies that ran."""

    reconcile: str | None = None  # None, "sent", "not sent" or "broken"
    fail_first: bool = False
    sent: list[str] = field(default_factory=list)
    reconciled: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def registry(self) -> ToolRegistry:
        registry = ToolRegistry()

        def check(arguments, ctx: ToolContext) -> Reconciled:
            self.reconciled.append(ctx.idempotency_key)
            if self.reconcile == "broken":
                raise ConnectionError("mail server unreachable")
            if self.reconcile == "sent":
                return Reconciled.done(f"sent earlier to {arguments['to']}")
            return Reconciled.not_done()

        @registry.tool(
            effect="once",
            reconcile=check if self.reconcile else None,
            retry=RetrySettings(maximum_attempts=3, initial_interval_s=0.1),
        )
        def send_mail(to: str, text: str, ctx: ToolContext) -> str:
            """Send an e-mail."""
            with self._lock:
                if self.fail_first and ctx.attempt == 1:
                    raise ConnectionError("SMTP refused, nothing sent")
                self.sent.append(to)
            return f"sent to {to}"

        return registry


async def mail_once(w, scripted_llm, mailer: Mailer, *, earlier_attempt_died: bool):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.tool_call("send_mail", SEND, "c1"), reply.text("Done.")])
    if earlier_attempt_died:
        key = idempotency_key(names.session_workflow_id(sid), "c1", RESULT_SEQ)
        attempts = ToolAttempts(w.store.db, w.store.engine.dialect.name)
        await attempts.begin(key, session_id=sid, call_id="c1", attempt=1)
    await w.sessions.start(sid, settings_for(scripted_llm, model))
    result = await w.sessions.send(sid, "mail ana")
    if result.status == "awaiting_approval":  # in doubt: a person answers (test_in_doubt_answers)
        return result, None
    [envelope] = tool_envelopes(scripted_llm.requests(model)[1])
    return result, envelope


async def test_a_once_call_runs_its_body_once(loop_worker, scripted_llm):
    mailer = Mailer()
    async with loop_worker(mailer.registry()) as w:
        result, envelope = await mail_once(w, scripted_llm, mailer, earlier_attempt_died=False)
    assert result.status == "completed" and envelope["ok"] is True
    assert mailer.sent == ["ana@example.com"]


async def test_without_reconcile_a_call_whose_attempt_died_in_the_body_is_in_doubt(
    loop_worker, scripted_llm
):
    """In doubt, the call waits for a person's answer (without one, once its hold expires,
    the model reads TOOL_CALL_IN_DOUBT: see test_in_doubt_answers)."""
    mailer = Mailer()
    async with loop_worker(mailer.registry()) as w:
        result, _ = await mail_once(w, scripted_llm, mailer, earlier_attempt_died=True)
    assert mailer.sent == []  # never run again blindly
    [held] = result.pending_approvals
    assert held.kind == "in_doubt" and "attempt 1 stopped inside the tool" in (held.doubt or "")
    assert result.status == "awaiting_approval" and result.tool_calls == []


@pytest.mark.parametrize(
    ("found", "sent", "ok"),
    [("sent", [], True), ("not sent", ["ana@example.com"], True)],
)
async def test_reconcile_settles_a_call_whose_attempt_died_in_the_body(
    loop_worker, scripted_llm, found, sent, ok
):
    mailer = Mailer(reconcile=found)
    async with loop_worker(mailer.registry()) as w:
        result, envelope = await mail_once(w, scripted_llm, mailer, earlier_attempt_died=True)
    assert mailer.sent == sent and envelope["ok"] is ok
    if found == "sent":
        assert envelope["data"] == "sent earlier to ana@example.com"
        assert "reconcile check found that its effect happened" in envelope["warnings"][0]
    assert result.status == "completed"


async def test_a_reconcile_that_keeps_failing_puts_the_call_in_doubt(loop_worker, scripted_llm):
    mailer = Mailer(reconcile="broken")
    async with loop_worker(mailer.registry()) as w:
        result, _ = await mail_once(w, scripted_llm, mailer, earlier_attempt_died=True)
    assert mailer.sent == [] and len(mailer.reconciled) == 3  # asked on every attempt
    [held] = result.pending_approvals
    assert held.kind == "in_doubt"
    assert "reconcile check failed: ConnectionError" in (held.doubt or "")


async def test_a_body_that_raised_may_run_again(loop_worker, scripted_llm):
    """The tool itself said it failed (it raised): that is no doubt, so the retry runs."""
    mailer = Mailer(fail_first=True)
    async with loop_worker(mailer.registry()) as w:
        result, envelope = await mail_once(w, scripted_llm, mailer, earlier_attempt_died=False)
    assert mailer.sent == ["ana@example.com"] and envelope["ok"] is True
    assert result.tool_calls[0].ok


def test_reconcile_goes_with_effect_once():
    registry = ToolRegistry()
    with pytest.raises(ValueError, match="reconcile goes with effect='once'"):
        registry.register(lambda: "x", name="plain", reconcile=lambda a, c: Reconciled.done())
