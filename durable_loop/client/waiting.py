"""What waits for a person: the held tool calls and pending proposals of one session, or of
every session the visibility store says has some.

Across sessions the visibility query ``DurableLoopPendingProposals > 0`` (the attribute
counts both) finds the sessions; sessions that keep no search attributes (started while the
namespace had none registered) are asked too, so nothing that waits is left out. Each found
session is then asked by its ``tool_approvals`` and ``proposals`` Queries, which give what
a person needs to decide (fingerprints, arguments, changes). A sub-agent's held calls are
listed by its parent session.
"""

from __future__ import annotations

import asyncio

from pydantic import BaseModel, Field
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from durable_loop.client.proposals import ProposalClient
from durable_loop.client.tool_approvals import ToolApprovalClient
from durable_loop.core import names
from durable_loop.core.approval_models import PendingToolCall
from durable_loop.core.errors import DurableLoopError, ErrorCode
from durable_loop.core.proposals import PendingProposal
from durable_loop.workflows.visibility import PENDING_PROPOSALS

SESSION_TYPES = f'WorkflowType IN ("{names.SESSION_WORKFLOW}", "{names.CHILD_SESSION_WORKFLOW}")'
"""Sessions, and sessions run as child workflows of an application's own; not sub-agents,
whose held calls their parent session lists."""
SESSIONS_QUERY = f'{SESSION_TYPES} AND ExecutionStatus = "Running"'
WAITING_QUERY = (
    f"{SESSIONS_QUERY} AND ({PENDING_PROPOSALS.name} > 0 OR {PENDING_PROPOSALS.name} IS NULL)"
)
"""Running sessions with decisions waiting, and those that keep no search attributes."""
IN_FLIGHT = 16


class VisibilityUnavailable(DurableLoopError):
    """The server cannot list workflows (the time-skipping test server)."""


class SessionWaiting(BaseModel):
    """What waits for a person in one session."""

    session_id: str
    tool_calls: list[PendingToolCall] = Field(default_factory=list)
    proposals: list[PendingProposal] = Field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.tool_calls) + len(self.proposals)


class WaitingList(BaseModel):
    """Sessions with something that waits for a person, in the order they were found."""

    sessions: list[SessionWaiting] = Field(default_factory=list)

    @property
    def count(self) -> int:
        return sum(s.count for s in self.sessions)


async def waiting_in(client: Client, session_id: str) -> SessionWaiting:
    """The held calls and pending proposals of one session (two Queries at once)."""
    calls, proposals = await asyncio.gather(
        ToolApprovalClient(client).listing(session_id), ProposalClient(client).proposals(session_id)
    )
    return SessionWaiting(
        session_id=session_id, tool_calls=calls.pending, proposals=proposals.pending
    )


async def waiting_everywhere(client: Client, *, limit: int = 100) -> WaitingList:
    """Every running session (up to ``limit``) with something waiting for a person; where
    the namespace has no ``DurableLoopPendingProposals`` attribute, every running session
    is asked."""
    try:
        found = await session_ids(client, WAITING_QUERY, limit=limit)
    except RPCError as err:
        if err.status != RPCStatusCode.INVALID_ARGUMENT:
            raise
        found = await session_ids(client, SESSIONS_QUERY, limit=limit)  # not registered
    gate = asyncio.Semaphore(IN_FLIGHT)

    async def one(session_id: str) -> SessionWaiting | None:
        async with gate:
            try:
                return await waiting_in(client, session_id)
            except RPCError as err:
                if err.status == RPCStatusCode.NOT_FOUND:
                    return None  # ended between the listing and the Query
                raise

    answers = await asyncio.gather(*(one(s) for s in found))
    return WaitingList(sessions=[a for a in answers if a is not None and a.count])


async def session_ids(client: Client, query: str, *, limit: int) -> list[str]:
    """Session ids of the workflows ``query`` finds; :class:`VisibilityUnavailable` when
    the server has no visibility store."""
    prefix = names.session_workflow_id("")
    found: list[str] = []
    try:
        async for execution in client.list_workflows(query, limit=limit):
            if execution.id.startswith(prefix):
                found.append(execution.id.removeprefix(prefix))
    except RPCError as err:
        if err.status == RPCStatusCode.UNIMPLEMENTED:
            raise VisibilityUnavailable(
                ErrorCode.QUERY_FAILED,
                "this Temporal server cannot list workflows (no visibility store): name a session",
            ) from None
        raise
    return found
