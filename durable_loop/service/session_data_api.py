"""Sessions as data over HTTP: fork a session at a turn, export it as a bundle, import a
bundle as a new session (docs/sessions-as-data.md)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, status
from pydantic import BaseModel, Field, JsonValue

from durable_loop.client.session_data import SessionBundle, SessionData
from durable_loop.client.session_data.bundle import bundle_from
from durable_loop.core import names
from durable_loop.core.errors import DurableLoopError, ErrorCode
from durable_loop.core.session_ids import SESSION_ID_RULE, SessionIdText
from durable_loop.service.auth import require_identity
from durable_loop.service.deps import ServiceDeps, deps_of
from durable_loop.service.errors import ApiError, ErrorBody

router = APIRouter(
    prefix="/v1",
    dependencies=[Depends(require_identity)],
    tags=["sessions as data"],
    responses={
        404: {"model": ErrorBody},
        409: {"model": ErrorBody},
        422: {"model": ErrorBody},
    },
)
Deps = Annotated[ServiceDeps, Depends(deps_of)]
SessionId = Annotated[SessionIdText, Path(description=f"A session id: {SESSION_ID_RULE}")]

STATUS = {
    ErrorCode.SESSION_NOT_FOUND: 404,
    ErrorCode.SESSION_EXISTS: 409,
    ErrorCode.STALE_VERSION: 409,
    ErrorCode.TURN_OUT_OF_RANGE: 422,
    ErrorCode.BUNDLE_VERSION_UNSUPPORTED: 422,
}


class ForkSession(BaseModel):
    new_session_id: SessionIdText
    at_turn: int = Field(ge=1, description="The turn kept last (turns count from 1)")
    model: str | None = Field(default=None, description="Another model for the fork")
    system_prompt: str | None = Field(default=None, description="Another system prompt")


class ImportSession(BaseModel):
    new_session_id: SessionIdText
    bundle: dict[str, JsonValue] = Field(description="A bundle as export returns it")


class SessionCreated(BaseModel):
    session_id: str
    workflow_id: str
    web_ui_url: str | None = None
    from_session: str = Field(description="SESSION@TURN of a fork; the exported id of an import")
    messages_copied: int


def _data(deps: ServiceDeps) -> SessionData:
    if deps.workspace is None:
        raise ApiError(
            404, ErrorCode.STORE_NOT_FOUND, "this service has no store: start it with --db-url"
        )
    return SessionData(deps.sessions, deps.workspace.db)


def _refused(err: DurableLoopError) -> ApiError:
    code = ErrorCode(err.code)
    return ApiError(STATUS.get(code, 422), code, err.message)


def _created(deps: ServiceDeps, session_id: str, origin: str, copied: int) -> SessionCreated:
    deps.directory.remember(session_id)
    workflow_id = names.session_workflow_id(session_id)
    return SessionCreated(
        session_id=session_id,
        workflow_id=workflow_id,
        web_ui_url=deps.web_ui_link(workflow_id),
        from_session=origin,
        messages_copied=copied,
    )


@router.post("/sessions/{session_id}/fork", status_code=status.HTTP_201_CREATED)
async def fork_session(session_id: SessionId, body: ForkSession, deps: Deps) -> SessionCreated:
    """Start a new session from this one's transcript up to ``at_turn``; nothing is re-run
    and this session is left as it is."""
    try:
        done = await _data(deps).fork(
            session_id,
            body.at_turn,
            body.new_session_id,
            model=body.model,
            system_prompt=body.system_prompt,
        )
    except DurableLoopError as err:
        raise _refused(err) from None
    return _created(deps, done.session_id, done.forked_from, done.rows_copied)


@router.get("/sessions/{session_id}/export")
async def export_session(session_id: SessionId, deps: Deps) -> SessionBundle:
    """The session as a portable bundle, without secrets."""
    try:
        return await _data(deps).export(session_id)
    except DurableLoopError as err:
        raise _refused(err) from None


@router.post("/sessions/import", status_code=status.HTTP_201_CREATED)
async def import_session(body: ImportSession, deps: Deps) -> SessionCreated:
    """Recreate an exported session as ``new_session_id`` on this server and store."""
    try:
        bundle = bundle_from(body.bundle)
        await _data(deps).import_bundle(bundle, body.new_session_id)
    except DurableLoopError as err:
        raise _refused(err) from None
    return _created(deps, body.new_session_id, bundle.session_id, len(bundle.rows))
