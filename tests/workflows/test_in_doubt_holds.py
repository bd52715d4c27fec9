"""Where a call in doubt shows while it waits for a person (patch ``in-doubt-to-person``),
and a once call whose attempt outlived its timeout: held in doubt, not ended ``TOOL_TIMEOUT``."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field

import pytest

from durable_loop.core.registry import ToolContext, ToolRegistry
from durable_loop.core.retry import RetrySettings
from durable_loop.testing import reply
from durable_loop.workflows import visibility
from tests.client.kit import with_search_attributes
from tests.conftest import settings_for, unique
from tests.workflows.proposal_kit import eventually, tool_envelopes
from tests.workflows.test_in_doubt_answers import finished, held_in_doubt
from tests.workflows.test_once_tools import SEND, Mailer


async def test_a_call_in_doubt_counts_as_waiting_until_answered(loop_worker, scripted_llm):
    mailer = Mailer()
    async with loop_worker(mailer.registry()) as w:
        await with_search_attributes(w)
        model, sid, first, _ = await held_in_doubt(w, scripted_llm)

        async def attributes(pending: int, status: str):
            attrs = (await w.sessions.handle(sid).describe()).typed_search_attributes
            now = (attrs.get(visibility.PENDING_PROPOSALS), attrs.get(visibility.STATUS))
            return attrs if now == (pending, status) else None

        waiting = await eventually(lambda: attributes(1, "awaiting_approval"))
        status_waiting = await w.sessions.status(sid)
        listed_waiting = await w.sessions.tool_approvals(sid)
        await w.sessions.tool_calls.answer(sid, "c1", "give_up", "alice")
        await finished(w, scripted_llm, model, sid, first.message_id)
        answered = await eventually(lambda: attributes(0, "idle"))
        status_answered = await w.sessions.status(sid)
        listed_answered = await w.sessions.tool_approvals(sid)
    assert waiting.get(visibility.PENDING_PROPOSALS) == 1
    assert status_waiting.state == "awaiting_approval"
    assert [(p.call_id, p.kind) for p in listed_waiting.pending] == [("c1", "in_doubt")]
    assert answered.get(visibility.PENDING_PROPOSALS) == 0
    assert status_answered.state == "idle"
    assert listed_answered.pending == []
    assert [(d.call_id, d.status) for d in listed_answered.decided] == [("c1", "given_up")]


@dataclass
class StuckMailer:
    """A ``send_mail`` that cannot take a key and does not stop when its timeout cancels it
    (a client library stuck in a call, say), so its activity outlives the activity's
    timeout; it ends when the test releases it."""

    timeout_s: float = 0.5
    attempts: int = 2
    started: list[int] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    returned: threading.Event = field(default_factory=threading.Event)

    def registry(self) -> ToolRegistry:
        registry = ToolRegistry()

        @registry.tool(
            effect="once",
            timeout_s=self.timeout_s,
            retry=RetrySettings(maximum_attempts=self.attempts, initial_interval_s=0.1),
        )
        async def send_mail(to: str, text: str, ctx: ToolContext) -> str:
            """Send an e-mail."""
            self.started.append(ctx.attempt)
            while not self.release.is_set():
                try:
                    await asyncio.sleep(0.05)
                except asyncio.CancelledError:
                    continue
            self.returned.set()
            return f"sent to {to}"

        return registry


@pytest.mark.parametrize(
    ("attempts", "doubt"),
    [
        (1, "its last attempt ended without a result (timed out)"),
        (2, "attempt 1 stopped inside the tool (the tool has no reconcile check)"),
    ],
    ids=["last-attempt-timed-out", "retry-finds-the-timed-out-attempt"],
)
async def test_a_once_call_whose_attempt_timed_out_is_held_in_doubt(
    loop_worker, scripted_llm, attempts: int, doubt: str
):
    """The first attempt outlives the activity's timeout (tool timeout + scheduling slack,
    about 10 s of real time). With no attempt left the workflow puts the call in doubt;
    with one left, the retry finds the first attempt's marker and does not run the body
    again. Either way a person is asked rather than the call ending TOOL_TIMEOUT."""
    mailer = StuckMailer(attempts=attempts)
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.tool_call("send_mail", SEND, "c1"), reply.text("Done.")])
    async with loop_worker(mailer.registry()) as w:
        try:
            await w.sessions.start(sid, settings_for(scripted_llm, model))
            first = await w.sessions.send(sid, "mail ana")
            listing = await w.sessions.tool_approvals(sid)
            await w.sessions.tool_calls.answer(sid, "c1", "give_up", "alice")
            final = await w.sessions.message_result(sid, first.message_id)
        finally:  # after the answer: a late body's result must not race the person's
            mailer.release.set()
        [envelope] = tool_envelopes(scripted_llm.requests(model)[1])
    assert first.status == "awaiting_approval", first
    [held] = listing.pending
    assert (held.call_id, held.kind, held.reruns) == ("c1", "in_doubt", 0)
    assert doubt in (held.doubt or "")
    assert mailer.started == [1]  # the body ran once
    assert envelope["errors"][0]["code"] == "TOOL_CALL_REJECTED"
    assert final.status == "completed" and final.tool_calls[0].error_codes == ["TOOL_CALL_REJECTED"]


@dataclass
class SlowMailer:
    """A ``send_mail`` that cannot take a key and whose body outlasts its own timeout."""

    timeout_s: float = 0.3
    started: list[int] = field(default_factory=list)

    def registry(self) -> ToolRegistry:
        registry = ToolRegistry()

        @registry.tool(effect="once", timeout_s=self.timeout_s)
        def send_mail(to: str, text: str, ctx: ToolContext) -> str:
            """Send an e-mail."""
            self.started.append(ctx.attempt)
            threading.Event().wait(self.timeout_s * 3)
            return f"sent to {to}"

        return registry


async def test_a_once_call_past_its_tool_timeout_is_held_in_doubt(loop_worker, scripted_llm):
    mailer = SlowMailer()
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.tool_call("send_mail", SEND, "c1"), reply.text("Done.")])
    async with loop_worker(mailer.registry()) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        first = await w.sessions.send(sid, "mail ana")
    assert mailer.started == [1]
    assert first.status == "awaiting_approval", first.tool_calls
    assert [p.kind for p in first.pending_approvals] == ["in_doubt"]
