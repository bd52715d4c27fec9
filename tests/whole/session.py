"""Driving the all-features session: every feature of the last wave, in one session.

Tool approvals (approve, approve with edits, reject, expire), a message over budget and a
budget raise, a fact proposal decided by Update, a typed answer, a turn that falls back to
the next model, a cancel and an interrupt, a sub-agent whose call waits for a person. What
each step answered is kept in :class:`Drive` for the inspectors to be checked against.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Literal, TypeVar

import httpx
from pydantic import JsonValue
from temporalio.testing import WorkflowEnvironment

from durable_loop.client.sessions import SessionClient
from durable_loop.core.approvals import (
    ApprovalSettings,
    PendingToolCall,
    ToolApprovalList,
    ToolCallDecided,
)
from durable_loop.core.budget import BudgetChange, BudgetChangeResult
from durable_loop.core.config import RuntimeConfig, SessionSettings
from durable_loop.core.contracts import RunResult
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.registry import ToolRegistry
from durable_loop.core.sub_agent_config import SubAgentConfig
from durable_loop.store.workspace import WorkspaceStore
from durable_loop.testing.scripted import ScriptedLLM
from durable_loop.tools.workspace import workspace_tools
from tests.conftest import FAST_RETRY, unique
from tests.whole.story import (
    CANCELLED,
    CITY,
    DELEGATE,
    EXPIRES,
    FALLBACK,
    INTERRUPTED,
    OVER_BUDGET,
    PAY,
    PROPOSE,
    STEERED,
    STORY,
    TYPED,
    Message,
    Play,
    child_replies,
)
from tests.workflows.approval_kit import Payments

T = TypeVar("T")
TITLE = "Everything at once"
BUDGET_BEFORE = 30
"""The first message's two turns (15 tokens each) spend it: the second message is refused."""
BUDGET_AFTER = 100_000


def approval_ttl_s(env: WorkflowEnvironment) -> float:
    """Two hours of simulated time; on the dev server (real time) long enough for the
    decisions the test makes at once, short enough to wait out for the expiry."""
    return 7200.0 if env.supports_time_skipping else 8.0


@dataclass(frozen=True)
class Models:
    primary: str = field(default_factory=lambda: unique("primary"))
    backup: str = field(default_factory=lambda: unique("backup"))
    child: str = field(default_factory=lambda: unique("researcher"))


@dataclass
class Rig:
    """What the driver needs: the server, the session client, the service and the models."""

    env: WorkflowEnvironment
    sessions: SessionClient
    service: httpx.AsyncClient
    """The HTTP service (API and approval page) on the same client, signed in as alice."""
    workspace: WorkspaceStore
    flaky: ScriptedLLM
    """The primary model's endpoint: down (503) for one message."""
    scripted: ScriptedLLM
    """The fallback model's and the sub-agent's endpoint."""
    payments: Payments
    models: Models = field(default_factory=Models)
    play: Play = field(default_factory=Play)


@dataclass(frozen=True)
class Decided:
    """A decision as the one who made it was answered (or, for an expiry, as listed)."""

    kind: Literal["tool call", "proposal"]
    target: str
    who: str
    status: str
    session_id: str
    edited_fields: tuple[str, ...] = ()


@dataclass
class Drive:
    """What the session's steps answered."""

    session_id: str
    results: dict[str, RunResult] = field(default_factory=dict)
    """The final RunResult of each message, in the story's order."""
    interim: dict[str, RunResult] = field(default_factory=dict)
    """The first answer of the messages whose calls waited for a person."""
    decided: list[Decided] = field(default_factory=list)
    budget: BudgetChangeResult | None = None
    proposal_id: str = ""
    child_id: str = ""
    pages: dict[str, str] = field(default_factory=dict)
    """The approval page's HTML at the moments something waited for a person."""
    held: dict[str, ToolApprovalList] = field(default_factory=dict)
    states: dict[str, str] = field(default_factory=dict)
    """The session's status (Query) at those moments."""
    found_waiting: bool | None = None
    """Visibility found the session waiting while its sub-agent held a call."""


def registry(rig: Rig) -> ToolRegistry:
    """pay (needs approval), lookup, the workspace tools and a researcher sub-agent."""
    tools = rig.payments.registry().merged(workspace_tools(rig.workspace))
    tools.add_sub_agent(
        SubAgentConfig(
            name="researcher",
            description="Does what it is asked with the payment tool",
            llm=endpoint(rig.scripted, rig.models.child),
            system_prompt="You pay.",
            tools=["pay"],
        )
    )
    return tools


def endpoint(llm: ScriptedLLM, model: str) -> LlmEndpoint:
    return LlmEndpoint(model=model, base_url=llm.base_url, timeout_s=10.0, retry=FAST_RETRY)


def settings(rig: Rig) -> SessionSettings:
    return SessionSettings(
        llm=endpoint(rig.flaky, rig.models.primary),
        fallback_llms=[endpoint(rig.scripted, rig.models.backup)],
        runtime=RuntimeConfig(parallel_tool_calls=True, max_session_tokens=BUDGET_BEFORE),
        approvals=ApprovalSettings(ttl_s=approval_ttl_s(rig.env)),
        title=TITLE,
    )


def script(rig: Rig) -> None:
    rig.flaky.script(rig.models.primary, [], then=rig.play.primary)
    rig.scripted.script(rig.models.backup, [], then=rig.play.answer)
    rig.scripted.script(rig.models.child, child_replies())


async def eventually(probe: Callable[[], Awaitable[T | None]], timeout_s: float = 20.0) -> T:
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not (value := await probe()):
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.05)
    return value


async def approval_page(rig: Rig) -> str:
    page = await rig.service.get("/ui/approvals")
    assert page.status_code == 200, page.text
    return page.text


def tool_decided(answer: ToolCallDecided, session_id: str) -> Decided:
    return Decided(
        "tool call",
        answer.call_id,
        answer.decided_by,
        answer.status,
        session_id,
        tuple(answer.edited_fields),
    )


async def drive(rig: Rig) -> Drive:
    """Run the whole story on one session; the worker must be running."""
    script(rig)
    sid = unique("whole")
    await rig.workspace.create(sid, facts={"title": "Old"})
    await rig.sessions.start(sid, settings(rig))
    done = Drive(sid)
    for step in (approvals, over_budget, proposal, typed, fallback, cancel, interrupt):
        await step(rig, done)
    await delegate(rig, done)
    await expiry(rig, done)
    done.results = {m.message_id: done.results[m.message_id] for m in STORY}
    return done


async def send(
    rig: Rig,
    done: Drive,
    message: Message,
    *,
    interrupt: bool = False,
    output_schema: dict[str, JsonValue] | None = None,
) -> RunResult:
    result = await rig.sessions.send(
        done.session_id,
        message.text,
        message_id=message.message_id,
        interrupt=interrupt,
        output_schema=output_schema,
    )
    done.results[message.message_id] = result
    return result


async def approvals(rig: Rig, done: Drive) -> None:
    """Three held calls: approved, approved with edited arguments, rejected."""
    sid, s = done.session_id, rig.sessions
    first = await send(rig, done, PAY)
    done.interim[PAY.message_id] = first
    assert first.status == "awaiting_approval", first
    done.pages["tool calls"] = await approval_page(rig)
    done.held["tool calls"] = await s.tool_approvals(sid)
    done.states["tool calls"] = (await s.status(sid)).state
    held = {p.call_id: p for p in first.pending_approvals}
    for decision in (
        held["c1"].decision("confirm", "alice", comment="known supplier"),
        held["c2"].decision("confirm", "alice", arguments={"amount": 80, "to": "bob"}),
        held["c3"].decision("reject", "bob", comment="eve is not a supplier"),
    ):
        done.decided.append(tool_decided(await s.decide_tool_call(sid, decision), sid))
    done.results[PAY.message_id] = await s.message_result(sid, PAY.message_id)


async def over_budget(rig: Rig, done: Drive) -> None:
    """The budget is spent: the message fails; a person raises it."""
    await send(rig, done, OVER_BUDGET)
    change = BudgetChange(changed_by="ops", max_session_tokens=BUDGET_AFTER, comment="more room")
    done.budget = await rig.sessions.set_budget(done.session_id, change)


async def proposal(rig: Rig, done: Drive) -> None:
    """The model proposes a fact; alice approves it by Update."""
    sid, s = done.session_id, rig.sessions
    await send(rig, done, PROPOSE)

    async def pending() -> str | None:
        listing = await s.proposals(sid)
        return listing.pending[0].proposal_id if listing.pending else None

    done.proposal_id = await eventually(pending)
    done.pages["proposal"] = await approval_page(rig)
    decision = await s.approvals.decision_for(
        sid, done.proposal_id, "confirm", "alice", comment="good title"
    )
    answer = await s.decide(sid, decision)
    done.decided.append(
        Decided("proposal", done.proposal_id, answer.decided_by, answer.status, sid)
    )


async def typed(rig: Rig, done: Drive) -> None:
    """A typed answer: the first reply misses a field and is corrected."""
    await send(rig, done, TYPED, output_schema=CITY)


async def fallback(rig: Rig, done: Drive) -> None:
    """The primary's endpoint is down for this message: the backup answers."""
    await send(rig, done, FALLBACK)


async def asked(rig: Rig, message: Message) -> None:
    """Until one of the session's models got a request answering ``message``."""

    async def probe() -> bool:
        requests = [
            *rig.flaky.requests(rig.models.primary),
            *rig.scripted.requests(rig.models.backup),
        ]
        return any(
            m.get("role") == "user" and m.get("content") == message.text
            for r in requests
            for m in r.messages[-1:]
        )

    await eventually(probe)


async def cancel(rig: Rig, done: Drive) -> None:
    sending = asyncio.ensure_future(send(rig, done, CANCELLED))
    await asked(rig, CANCELLED)
    answer = await rig.sessions.cancel(
        done.session_id, CANCELLED.message_id, reason="changed my mind"
    )
    assert await sending == answer, (answer, sending.result())


async def interrupt(rig: Rig, done: Drive) -> None:
    interrupted = asyncio.ensure_future(send(rig, done, INTERRUPTED))
    await asked(rig, INTERRUPTED)
    await send(rig, done, STEERED, interrupt=True)
    await interrupted


async def delegate(rig: Rig, done: Drive) -> None:
    """The sub-agent's pay call waits for a person; alice approves it through the parent."""
    sid, s = done.session_id, rig.sessions
    sending = asyncio.ensure_future(send(rig, done, DELEGATE))

    async def held_in_child() -> ToolApprovalList | None:
        listing = await s.tool_approvals(sid)
        return listing if any(p.call_id == "c9" for p in listing.pending) else None

    listing = await eventually(held_in_child)
    done.held["sub-agent"] = listing
    [call] = [p for p in listing.pending if p.call_id == "c9"]
    done.child_id = call.session_id
    done.found_waiting = await found_waiting(rig, sid)
    done.pages["sub-agent"] = await approval_page(rig)
    done.states["sub-agent"] = (await s.status(sid)).state
    answer = await s.decide_tool_call(sid, call.decision("confirm", "alice"))
    done.decided.append(tool_decided(answer, call.session_id))
    first = await sending
    done.interim[DELEGATE.message_id] = first
    if first.status == "awaiting_approval":
        done.results[DELEGATE.message_id] = await s.message_result(sid, DELEGATE.message_id)


async def found_waiting(rig: Rig, session_id: str) -> bool | None:
    """Whether the Web UI's query for sessions waiting on a person (``DurableLoopPendingProposals
    > 0``) finds the session within a few seconds; None without visibility (the
    time-skipping server)."""
    if rig.env.supports_time_skipping or not rig.sessions.search_attributes:
        return None

    async def listed() -> bool:
        return session_id in await rig.sessions.sessions_awaiting_approval()

    try:
        return await eventually(listed, timeout_s=5.0)
    except AssertionError:
        return False


async def expiry(rig: Rig, done: Drive) -> None:
    """Nobody decides the last payment: it expires, and the model reads that."""
    sid, s = done.session_id, rig.sessions
    first = await send(rig, done, EXPIRES)
    done.interim[EXPIRES.message_id] = first
    assert first.status == "awaiting_approval", first
    [held] = first.pending_approvals
    await pass_expiry(rig.env, held)
    done.results[EXPIRES.message_id] = await s.message_result(sid, EXPIRES.message_id)
    listing = await s.tool_approvals(sid)
    [expired] = [d for d in listing.decided if d.call_id == held.call_id]
    done.decided.append(tool_decided(expired, sid))


async def pass_expiry(env: WorkflowEnvironment, held: PendingToolCall) -> None:
    """Sleep (simulated on the time-skipping server) past the call's expiry."""
    left = held.expires_at - await env.get_current_time()
    await env.sleep(max(left, timedelta(0)) + timedelta(seconds=2))
