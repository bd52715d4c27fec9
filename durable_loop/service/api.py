"""The JSON endpoints. Every route needs a bearer token (``require_identity``), resolved
before the body is read and before any Temporal call."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterable
from typing import Annotated

from fastapi import APIRouter, Depends, Header, Path, status
from fastapi.sse import EventSourceResponse, ServerSentEvent
from temporalio.client import WorkflowUpdateFailedError, WorkflowUpdateRPCTimeoutOrCancelledError

from durable_loop.client.trace.fetch import StoreMissing
from durable_loop.client.trace.models import Trace
from durable_loop.core import names
from durable_loop.core.contracts import RunResult, SessionStatus
from durable_loop.core.errors import ErrorCode
from durable_loop.core.proposals import DecisionResult, ProposalList
from durable_loop.service.auth import require_identity
from durable_loop.service.deps import ServiceDeps, deps_of
from durable_loop.service.errors import ApiError, ErrorBody, ErrorDetail, refusal
from durable_loop.service.models import (
    IDEMPOTENCY_KEY_PATTERN,
    SESSION_ID_PATTERN,
    Accepted,
    CancelMessage,
    CloseSession,
    Decide,
    PendingListing,
    PostMessage,
    SessionStarted,
    StartSession,
)

router = APIRouter(
    prefix="/v1",
    dependencies=[Depends(require_identity)],
    responses={
        400: {"model": ErrorBody},
        404: {"model": ErrorBody},
        409: {"model": ErrorBody},
        413: {"model": ErrorBody},
    },
)
Identity = Annotated[str, Depends(require_identity)]
SessionId = Annotated[str, Path(pattern=SESSION_ID_PATTERN)]
ProposalId = Annotated[str, Path(min_length=1, max_length=200)]


IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        pattern=IDEMPOTENCY_KEY_PATTERN,
        description="A retried POST with the same key returns the first reply "
        "instead of starting a second turn",
    ),
]


Deps = Annotated[ServiceDeps, Depends(deps_of)]


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
    """Start a session (or find the running one with the same id)."""
    session_id = body.session_id or uuid.uuid4().hex[:16]
    await deps.sessions.start(session_id, body.settings)
    deps.directory.remember(session_id)
    workflow_id = names.session_workflow_id(session_id)
    return SessionStarted(
        session_id=session_id, workflow_id=workflow_id, web_ui_url=deps.web_ui_link(workflow_id)
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
        call = deps.sessions.send(session_id, body.text, message_id=message_id, interrupt=interrupt)
    else:
        call = deps.sessions.start_and_send(
            session_id, body.settings, body.text, message_id=message_id, interrupt=interrupt
        )
    try:
        async with asyncio.timeout(deps.limits.reply_timeout_s):
            return await call
    except (TimeoutError, WorkflowUpdateRPCTimeoutOrCancelledError):
        raise ApiError(
            504,
            ErrorCode.REPLY_PENDING,
            f"no reply within {deps.limits.reply_timeout_s:g}s; the turn goes on: "
            "retry with the same Idempotency-Key to get the reply",
        ) from None


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
    workflow's validator before they enter history."""
    deps.directory.remember(session_id)
    if body.verdict == "confirm":
        return await deps.sessions.confirm(
            session_id, proposal_id, identity, comment=body.comment, fingerprint=body.fingerprint
        )
    return await deps.sessions.reject(
        session_id, proposal_id, identity, comment=body.comment, fingerprint=body.fingerprint
    )


@router.get("/sessions/{session_id}/trace", tags=["trace"])
async def session_trace(session_id: SessionId, deps: Deps) -> Trace:
    """Every turn: latency, model, tool calls and results, tokens (history + store)."""
    try:
        return await deps.sessions.trace(session_id, db_url=deps.db_url, ui_url=deps.ui_url)
    except StoreMissing:
        return await deps.sessions.trace(session_id, ui_url=deps.ui_url)
