"""The JSON endpoints. Every route needs a bearer token (``require_identity``), resolved
before the body is read and before any Temporal call."""

from __future__ import annotations

import asyncio
import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, Header, Path, Request, status
from temporalio.client import WorkflowUpdateRPCTimeoutOrCancelledError

from durable_loop.service.app import ServiceDeps
from durable_loop.service.auth import require_identity
from durable_loop.service.errors import ApiError, ErrorBody
from durable_loop.service.models import (
    SESSION_ID_PATTERN,
    Accepted,
    CloseSession,
    Decide,
    PendingListing,
    PostMessage,
    SessionStarted,
    StartSession,
)
from durable_loop.toolcalling import names
from durable_loop.toolcalling.contracts import RunResult, SessionStatus
from durable_loop.toolcalling.proposals import DecisionResult, ProposalList
from durable_loop.trace.fetch import StoreMissing
from durable_loop.trace.models import Trace

IDEMPOTENCY_KEY_PATTERN = r"^[\x21-\x7e]{1,200}$"

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


def deps_of(request: Request) -> ServiceDeps:
    deps: ServiceDeps = request.app.state.deps
    return deps


Deps = Annotated[ServiceDeps, Depends(deps_of)]


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
    identity: Identity,
    idempotency_key: Annotated[
        str | None,
        Header(
            alias="Idempotency-Key",
            pattern=IDEMPOTENCY_KEY_PATTERN,
            description="A retried POST with the same key returns the first reply "
            "instead of starting a second turn",
        ),
    ] = None,
) -> RunResult:
    """Send a message and wait for the reply (an Update; ``settings`` makes it
    update-with-start)."""
    limit = deps.limits.max_message_chars
    if len(body.text) > limit:
        raise ApiError(
            413, "MESSAGE_TOO_LARGE", f"the message has {len(body.text)} characters; limit {limit}"
        )
    message_id = f"{identity}:{idempotency_key}" if idempotency_key else uuid.uuid4().hex
    deps.directory.remember(session_id)
    if body.settings is None:
        call = deps.sessions.send(session_id, body.text, message_id=message_id)
    else:
        call = deps.sessions.start_and_send(
            session_id, body.settings, body.text, message_id=message_id
        )
    try:
        async with asyncio.timeout(deps.limits.reply_timeout_s):
            return await call
    except (TimeoutError, WorkflowUpdateRPCTimeoutOrCancelledError):
        hint = "retry with the same Idempotency-Key to get the reply" if idempotency_key else ""
        raise ApiError(
            504, "REPLY_PENDING", f"no reply within {deps.limits.reply_timeout_s:g}s; {hint}"
        ) from None


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
