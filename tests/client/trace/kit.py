"""Sessions with people in them, for the trace tests (client, CLI and HTTP): held calls
decided by Update and by Signal, a refused Signal, a budget change."""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Console

from durable_loop.client.trace.models import Trace
from durable_loop.client.trace.render import print_trace
from durable_loop.core.approvals import SIGNAL_TOOL_CALL_DECISION
from durable_loop.core.budget import BudgetChange
from durable_loop.core.contracts import RunResult
from durable_loop.testing import reply
from tests.conftest import unique
from tests.workflows.approval_kit import approval_settings
from tests.workflows.test_session import wait_until

PAY = {"amount": 250, "to": "acme"}
EDITED = {"amount": 200, "to": "acme"}


@dataclass
class DecidedSession:
    session_id: str
    model: str
    results: list[RunResult]
    """The final result of each message, in order."""


def rendered(trace: Trace, width: int = 220) -> str:
    console = Console(record=True, width=width)
    print_trace(trace, console)
    return console.export_text()


async def decided_session(w, scripted_llm, env) -> DecidedSession:
    """Four messages: ``pay`` approved with edits (Update), a stale Signal decision refused
    then ``pay`` rejected (Update), ``pay`` approved by Signal, and after a budget change
    (Update) a plain answer."""
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model,
        [
            reply.tool_call("pay", PAY, "c1"),
            reply.text("Paid 200."),
            reply.tool_call("pay", PAY, "c2"),
            reply.text("Not paid."),
            reply.tool_call("pay", PAY, "c3"),
            reply.text("Paid 250."),
            reply.text("Noted."),
        ],
    )
    sessions = w.sessions
    await sessions.start(sid, approval_settings(scripted_llm, model, env))
    first = await sessions.send(sid, "pay acme 250")
    await sessions.confirm_tool_call(sid, "c1", "alice", arguments=EDITED, comment="200 will do")
    results = [await sessions.message_result(sid, first.message_id)]

    second = await sessions.send(sid, "pay acme again")
    [held] = (await sessions.tool_approvals(sid)).pending
    stale = held.decision("confirm", "mallory").model_copy(update={"fingerprint": "stale"})
    await sessions.handle(sid).signal(SIGNAL_TOOL_CALL_DECISION, stale)

    async def refused() -> bool:
        return bool((await sessions.tool_approvals(sid)).refused)

    await wait_until(refused)
    await sessions.reject_tool_call(sid, "c2", "bob", comment="twice is too much")
    results.append(await sessions.message_result(sid, second.message_id))

    third = await sessions.send(sid, "pay acme once more")
    [held] = (await sessions.tool_approvals(sid)).pending
    await sessions.handle(sid).signal(SIGNAL_TOOL_CALL_DECISION, held.decision("confirm", "carol"))
    results.append(await sessions.message_result(sid, third.message_id))

    change = BudgetChange(changed_by="ops", max_turns=4, comment="keep it short")
    await sessions.set_budget(sid, change)
    results.append(await sessions.send(sid, "thanks"))
    return DecidedSession(session_id=sid, model=model, results=results)
