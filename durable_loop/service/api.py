"""The JSON endpoints. Every route needs a bearer token (``require_identity``), resolved
before the body is read and before any Temporal call."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterable, Awaitable
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, status
from fastapi.sse import EventSourceResponse, ServerSentEvent
from temporalio.client import WorkflowUpdateFailedError, WorkflowUpdateRPCTimeoutOrCancelledError

from durable_loop.client.trace.arguments import ARGS_CHARS
from durable_loop.client.trace.fetch import StoreMissing
from durable_loop.client.trace.models import Trace
from durable_loop.client.trace.replies import REPLY_CHARS
from durable_loop.client.workspace import AUDIT_ROWS, WorkspaceView
from durable_loop.core import names
from durable_loop.core.budget import BudgetChange, BudgetChangeResult
from durable_loop.core.contracts import RunResult, SessionStatus
from durable_loop.core.errors import ErrorCode
from durable_loop.core.proposals import DecisionResult, ProposalList
from durable_loop.service.auth import require_identity
from durable_loop.service.deps import ServiceDeps
from durable_loop.service.errors import ApiError, ErrorDetail, refusal
from durable_loop.service.models import (
    Accepted,
    CancelMessage,
    CloseSession,
    Decide,
    PendingListing,
    PostMessage,
    SessionStarted,
    SetBudget,
    StartSession,
)
from durable_loop.service.params import (
    ERROR_RESPONSES,
    Deps,
    IdempotencyKey,
    Identity,
    ProposalId,
    SessionId,
)
from durable_loop.service.unbound_decisions import require_fingerprint

router = APIRouter(
    prefix="/v1", dependencies=[Depends(require_identity)], responses=ERROR_RESPONSES
)


async def checked_message_id(
    body: PostMessage, deps: Deps, identity: Identity, idempotency_key: IdempotencyKey = None
) -> str:
    """The Update's message id (the idempotency key scoped to the caller's identity),
    after the size check. A dependency, so refusals come before a stream starts."""
    limit = deps.limits.max_message_chars
    if len(body.text) > limit:
        raise ApiError(
            413,
            ErrorCode.MESSAGE_TOO_LARGE,
            f"the message has {len(body.text)} characters; limit {limit}",
        )
    return f"{identity}:{idempotency_key}" if idempotency_key else uuid.uuid4().hex


async def existing_or_starting(session_id: SessionId, body: PostMessage, deps: Deps) -> None:
    """SESSION_NOT_FOUND before a stream starts when nothing would start the session."""
    if body.settings is None:
        await deps.sessions.status(session_id)


MessageId = Annotated[str, Depends(checked_message_id)]


@router.post("/sessions", status_code=status.HTTP_201_CREATED, tags=["sessions"])
async def start_session(body: StartSession, deps: Deps) -> SessionStarted:
    """Start a session (or find the running one with the same id, which keeps its own
    settings: ``settings_not_applied`` names those of the request that differ)."""
    session_id = body.session_id or uuid.uuid4().hex[:16]
    outcome = await deps.sessions.start_or_join(session_id, body.settings)
    deps.directory.remember(session_id)
    workflow_id = names.session_workflow_id(session_id)
    return SessionStarted(
        session_id=session_id,
        workflow_id=workflow_id,
        web_ui_url=deps.web_ui_link(workflow_id),
        started=outcome.started,
        settings_not_applied=outcome.settings_not_applied,
    )


@router.get("/sessions/{session_id}", tags=["sessions"])
async def session_status(session_id: SessionId, deps: Deps) -> SessionStatus:
    found = await deps.sessions.status(session_id)
    deps.directory.remember(session_id)
    return found


@router.post("/sessions/{session_id}/close", status_code=202, tags=["sessions"])
async def close_session(session_id: SessionId, body: CloseSession, deps: Deps) -> Accepted:
    await deps.sessions.close(session_id, body.reason)
    return Accepted(session_id=session_id)


@router.post("/sessions/{session_id}/messages", tags=["messages"])
async def post_message(
    session_id: SessionId,
    body: PostMessage,
    deps: Deps,
    message_id: MessageId,
) -> RunResult:
    """Send a message and wait for the reply (an Update; ``settings`` makes it
    update-with-start)."""
    deps.directory.remember(session_id)
    interrupt = body.interrupt
    if body.settings is None:
        call = deps.sessions.send(
            session_id,
            body.text,
            message_id=message_id,
            wait_for_approval=body.wait_for_approval,
            interrupt=interrupt,
            output_schema=body.output_schema,
        )
    else:
        call = deps.sessions.start_and_send(
            session_id,
            body.settings,
            body.text,
            message_id=message_id,
            interrupt=interrupt,
            output_schema=body.output_schema,
        )
    return await within_reply_timeout(
        call, deps, "retry with the same Idempotency-Key to get the reply"
    )


async def within_reply_timeout(
    call: Awaitable[RunResult], deps: ServiceDeps, hint: str
) -> RunResult:
    try:
        async with asyncio.timeout(deps.limits.reply_timeout_s):
            return await call
    except (TimeoutError, WorkflowUpdateRPCTimeoutOrCancelledError):
        raise ApiError(
            504,
            ErrorCode.REPLY_PENDING,
            f"no reply within {deps.limits.reply_timeout_s:g}s; the turn goes on: {hint}",
        ) from None


@router.get("/sessions/{session_id}/messages/{message_id}/result", tags=["messages"])
async def message_result(
    session_id: SessionId,
    message_id: Annotated[str, Path(min_length=1, max_length=300)],
    deps: Deps,
) -> RunResult:
    """Wait for a message's final result, e.g. after ``awaiting_approval`` (an Update;
    ``UNKNOWN_MESSAGE`` if the session has no message with that id)."""
    return await within_reply_timeout(
        deps.sessions.message_result(session_id, message_id), deps, "ask again"
    )


@router.post(
    "/sessions/{session_id}/messages/stream",
    response_class=EventSourceResponse,
    tags=["messages"],
)
async def stream_message(
    session_id: SessionId,
    body: PostMessage,
    deps: Deps,
    message_id: MessageId,
    _: Annotated[None, Depends(existing_or_starting)],
) -> AsyncIterable[ServerSentEvent]:
    """Like ``/messages`` but as Server-Sent Events while the message runs: ``entry``
    (a transcript entry: tool calls and results as they happen), ``proposal`` (a new
    pending proposal), ``text`` (reply text as it is generated, for sessions with
    ``stream_replies``), then ``result`` (the RunResult) or ``error`` (a coded error)."""
    deps.directory.remember(session_id)
    events = deps.sessions.send_with_progress(
        session_id,
        body.text,
        settings=body.settings,
        message_id=message_id,
        chunks=deps.chunks,
        interrupt=body.interrupt,
    )
    try:
        async with asyncio.timeout(deps.limits.reply_timeout_s):
            async for event in events:
                yield ServerSentEvent(event=event.kind, data=event.model_dump(mode="json"))
    except TimeoutError:
        error = ErrorDetail(
            code=ErrorCode.REPLY_PENDING, message="no reply in time; retry with the key"
        )
        yield ServerSentEvent(event="error", data=error.model_dump())
    except WorkflowUpdateFailedError as err:
        api = refusal(err)
        error = ErrorDetail(code=api.code, message=api.message)
        yield ServerSentEvent(event="error", data=error.model_dump())


@router.post("/sessions/{session_id}/cancel", tags=["messages"])
async def cancel_message(
    session_id: SessionId, body: CancelMessage, deps: Deps, identity: Identity
) -> RunResult:
    """Cancel the running message (or a queued or running one by id) and answer with its
    RunResult (status ``cancelled``) once it has stopped. Refused with a code while idle
    (NOTHING_RUNNING), for an unknown (UNKNOWN_MESSAGE, 404) or finished message
    (MESSAGE_FINISHED) and twice (ALREADY_CANCELLED); nothing changes then."""
    message_id = body.message_id
    if body.idempotency_key is not None:
        message_id = f"{identity}:{body.idempotency_key}"
    return await deps.sessions.cancel(session_id, message_id, reason=body.reason)


@router.get("/sessions/{session_id}/proposals", tags=["proposals"])
async def session_proposals(session_id: SessionId, deps: Deps) -> ProposalList:
    listing = await deps.sessions.proposals(session_id)
    deps.directory.remember(session_id)
    return listing


@router.get("/proposals", tags=["proposals"])
async def pending_proposals(deps: Deps) -> PendingListing:
    """Pending proposals across sessions, each with its diff against the current facts."""
    return await deps.directory.pending(deps.workspace)


@router.post("/sessions/{session_id}/proposals/{proposal_id}/decision", tags=["decisions"])
async def decide(
    session_id: SessionId,
    proposal_id: ProposalId,
    body: Decide,
    deps: Deps,
    identity: Identity,
) -> DecisionResult:
    """Confirm or reject a proposal; the token's identity is recorded as the approver.
    Unknown, expired, already decided or stale (fingerprint) decisions are refused by the
    workflow with a code, and each refusal is audited."""
    deps.directory.remember(session_id)
    await require_fingerprint(
        body.fingerprint,
        deps,
        session_id=session_id,
        approver=identity,
        target="proposal",
        decided_on=proposal_id,
        comment=body.comment,
    )
    if body.verdict == "confirm":
        return await deps.sessions.confirm(
            session_id, proposal_id, identity, comment=body.comment, fingerprint=body.fingerprint
        )
    return await deps.sessions.reject(
        session_id, proposal_id, identity, comment=body.comment, fingerprint=body.fingerprint
    )


@router.get("/sessions/{session_id}/workspace", tags=["workspace"])
async def session_workspace(
    session_id: SessionId, deps: Deps, audit: Annotated[int, Query(ge=0, le=500)] = AUDIT_ROWS
) -> WorkspaceView:
    """The session's workspace: committed facts, draft, locks, version and the newest
    ``audit`` audit rows (who changed what, from which proposal)."""
    return await deps.workspace_view(session_id, audit)


@router.post("/sessions/{session_id}/budget", tags=["sessions"])
async def set_budget(
    session_id: SessionId, body: SetBudget, deps: Deps, identity: Identity
) -> BudgetChangeResult:
    """Change the running session's budget from its next message on (the set_budget
    Update); the token's identity is recorded in the audit log. A change with nothing to
    change is refused (INVALID_SETTING) before it enters history."""
    deps.directory.remember(session_id)
    change = BudgetChange(changed_by=identity, **body.model_dump())
    return await deps.sessions.set_budget(session_id, change)


@router.get("/sessions/{session_id}/trace", tags=["trace"])
async def session_trace(
    session_id: SessionId, deps: Deps, full_args: bool = False, full: bool = False
) -> Trace:
    """Every message (status, reply cut at 300 characters unless ``full``) and turn:
    latency, model, tool calls with their arguments (cut at 200 characters unless
    ``full_args`` or ``full``) and results, tokens (sub-agents' included); and the
    decisions, budget changes, model switches, cancels and refusals as typed ``entries``
    (history + store)."""
    args_chars = None if full_args or full else ARGS_CHARS
    reply_chars = None if full else REPLY_CHARS
    try:
        return await deps.sessions.trace(
            session_id,
            db_url=deps.db_url,
            ui_url=deps.ui_url,
            args_chars=args_chars,
            reply_chars=reply_chars,
        )
    except StoreMissing:
        return await deps.sessions.trace(
            session_id, ui_url=deps.ui_url, args_chars=args_chars, reply_chars=reply_chars
        )
