"""The approval page: pending proposals across sessions, each as a diff against the
current facts, and held tool calls with their pretty-printed arguments, each with
approve/reject and a comment. Arguments a person edits are shown as a diff against the
model's before the edited call is approved. Server-rendered, no JavaScript.

What a session or a person supplied (arguments, comments, approver names, tool names, ids)
is shown through the ``visible`` and ``visible_json`` filters
(:mod:`durable_loop.core.visible_text`): control, bidi and other invisible characters show
as ``\\n`` / ``\\u202e`` escapes, so no value can fake a line or reorder a field on the page;
Jinja's autoescaping stays on for the HTML. The editable arguments are that same escaped
JSON, which parses back to the model's arguments unchanged.

The token is entered once and kept in an HttpOnly, SameSite=Strict cookie, so a form on
another site cannot post a decision; its identity is recorded as the approver.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from pydantic import JsonValue
from temporalio.client import WorkflowUpdateFailedError
from temporalio.service import RPCError

from durable_loop.client.proposals import ProposalNotPending
from durable_loop.client.tool_approvals import ToolCallNotPending
from durable_loop.client.workspace import AUDIT_ROWS, document_rows
from durable_loop.client.workspace_decisions import decision_lines
from durable_loop.core.approvals import InDoubtAnswer, Remember, ToolCallDecided, ToolCallDecision
from durable_loop.core.errors import ErrorCode
from durable_loop.core.proposals import DecisionResult, VerdictInput, decided_word
from durable_loop.core.visible_text import visible, visible_json
from durable_loop.service.auth import COOKIE, page_identity
from durable_loop.service.deps import ServiceDeps, deps_of
from durable_loop.service.diff import json_diff
from durable_loop.service.errors import ApiError, from_rpc, not_pending, refusal

router = APIRouter(include_in_schema=False)
templates = Jinja2Templates(directory=Path(__file__).parent / "templates")
templates.env.globals["decided_word"] = decided_word
PAGE = "/ui/approvals"


def _visible(value: object) -> str:
    """The ``visible`` filter: any value as text a person can trust (None: empty)."""
    return "" if value is None else visible(str(value))


templates.env.filters["visible"] = _visible
templates.env.filters["visible_json"] = visible_json


def _back(**params: str) -> RedirectResponse:
    query = f"?{urlencode(params)}" if params else ""
    return RedirectResponse(PAGE + query, status_code=303)


@router.get("/")
async def root() -> RedirectResponse:
    return RedirectResponse(PAGE, status_code=307)


@router.get("/ui/approvals", response_class=HTMLResponse)
async def approvals(
    request: Request,
    session: str | None = None,
    proposal: str | None = None,
    call: str | None = None,
    error: str | None = None,
    message: str | None = None,
) -> Response:
    identity = page_identity(request)
    if identity is None:
        return templates.TemplateResponse(request, "login.html", {"failed": False})
    deps = deps_of(request)
    outcome = await _outcome(deps, session, proposal) if session and proposal else None
    call_outcome = await _call_outcome(deps, session, call) if session and call else None
    listing = await deps.directory.pending(deps.workspace)
    context = {
        "identity": identity,
        "listing": listing,
        "outcome": outcome,
        "call_outcome": call_outcome,
        "outcome_session": session,
        "error": {"code": error, "message": message or ""} if error else None,
    }
    return templates.TemplateResponse(request, "approvals.html", context)


@router.get("/ui/sessions/{session_id}/workspace", response_class=HTMLResponse)
async def workspace(request: Request, session_id: str, audit: int = AUDIT_ROWS) -> Response:
    """The session's facts, draft, locks, version and newest audit rows."""
    identity = page_identity(request)
    if identity is None:
        return templates.TemplateResponse(request, "login.html", {"failed": False})
    context: dict[str, object] = {"identity": identity, "session_id": session_id}
    try:
        view = await deps_of(request).workspace_view(session_id, max(0, min(audit, 500)))
    except (ApiError, RPCError) as err:
        api = err if isinstance(err, ApiError) else from_rpc(err, session_id)
        context["error"] = {"code": api.code, "message": api.message}
        return templates.TemplateResponse(request, "workspace.html", context, api.status)
    context |= {
        "view": view,
        "facts": document_rows(view.facts, view.locks),
        "draft": document_rows(view.draft, view.locks),
        "decisions": decision_lines(view),
    }
    return templates.TemplateResponse(request, "workspace.html", context)


@router.post("/ui/login")
async def login(request: Request, token: Annotated[str, Form()]) -> Response:
    if deps_of(request).tokens.identity(token.strip()) is None:
        return templates.TemplateResponse(request, "login.html", {"failed": True}, 401)
    response = _back()
    response.set_cookie(COOKIE, token.strip(), httponly=True, samesite="strict", path="/ui")
    return response


@router.post("/ui/logout")
async def logout() -> Response:
    response = _back()
    response.delete_cookie(COOKIE, path="/ui")
    return response


@router.post("/ui/decide")
async def decide(
    request: Request,
    session_id: Annotated[str, Form()],
    proposal_id: Annotated[str, Form()],
    fingerprint: Annotated[str, Form()],
    verdict: Annotated[VerdictInput, Form()],
    comment: Annotated[str, Form()] = "",
) -> Response:
    identity = page_identity(request)
    if identity is None:
        return templates.TemplateResponse(request, "login.html", {"failed": False}, 401)
    deps = deps_of(request)
    deps.directory.remember(session_id)
    decide_with = deps.sessions.confirm if verdict == "confirm" else deps.sessions.reject
    try:
        await decide_with(
            session_id,
            proposal_id,
            identity,
            comment=comment.strip()[:2_000] or None,
            fingerprint=fingerprint,
        )
    except (WorkflowUpdateFailedError, ProposalNotPending, RPCError) as err:
        api = _api_error(err, session_id)
        return _back(error=api.code, message=api.message)
    return _back(session=session_id, proposal=proposal_id)


def _api_error(err: Exception, session_id: str) -> ApiError:
    if isinstance(err, WorkflowUpdateFailedError):
        return refusal(err)
    if isinstance(err, ProposalNotPending | ToolCallNotPending):
        return not_pending(err)
    assert isinstance(err, RPCError)
    return from_rpc(err, session_id)


async def _outcome(deps: ServiceDeps, session_id: str, proposal_id: str) -> DecisionResult | None:
    try:
        listing = await deps.sessions.proposals(session_id)
    except RPCError:
        return None
    return next((d for d in listing.decided if d.proposal_id == proposal_id), None)


@router.post("/ui/tool-call")
async def decide_tool_call(
    request: Request,
    session_id: Annotated[str, Form()],
    call_id: Annotated[str, Form()],
    fingerprint: Annotated[str, Form()],
    verdict: Annotated[VerdictInput, Form()],
    arguments: Annotated[str, Form()] = "",
    comment: Annotated[str, Form()] = "",
    edit_seen: Annotated[str, Form()] = "",
    remember: Annotated[str, Form()] = "",
) -> Response:
    """Approve or reject a held call; an edit of its arguments is shown as a diff first.
    ``remember=session`` with an approval keeps a standing approval of the tool."""
    identity = page_identity(request)
    if identity is None:
        return templates.TemplateResponse(request, "login.html", {"failed": False}, 401)
    deps = deps_of(request)
    deps.directory.remember(session_id)
    note = comment.strip()[:2_000] or None
    try:
        pending = await deps.sessions.tool_calls.pending(session_id, call_id)
        edited = _edited(arguments, pending.arguments) if verdict == "confirm" else None
        if edited is not None and not edit_seen:
            context = {
                "identity": identity,
                "session_id": session_id,
                "call": pending,
                "diff": json_diff(pending.arguments, edited),
                "arguments": visible_json(edited),
                "comment": note or "",
                "remember": remember == "session",
            }
            return templates.TemplateResponse(request, "tool_call_edit.html", context)
        decision = ToolCallDecision(
            call_id=call_id,
            verdict=verdict,
            approver=identity,
            fingerprint=fingerprint,
            comment=note,
            arguments=edited,
            session_id=session_id,
            remember=Remember() if remember == "session" and verdict == "confirm" else None,
        )
        await deps.sessions.decide_tool_call(session_id, decision)
    except (WorkflowUpdateFailedError, ToolCallNotPending, RPCError) as err:
        api = _api_error(err, session_id)
        return _back(error=api.code, message=api.message)
    except ValueError as err:
        return _back(error=ErrorCode.INVALID_JSON, message=f"the arguments are not JSON: {err}")
    return _back(session=session_id, call=call_id)


@router.post("/ui/tool-call-answer")
async def answer_tool_call(
    request: Request,
    session_id: Annotated[str, Form()],
    call_id: Annotated[str, Form()],
    fingerprint: Annotated[str, Form()],
    answer: Annotated[InDoubtAnswer, Form()],
    result: Annotated[str, Form()] = "",
    comment: Annotated[str, Form()] = "",
) -> Response:
    """Settle a call in doubt: happened (with the result the model reads), run_again or
    give_up, bound to the fingerprint shown."""
    identity = page_identity(request)
    if identity is None:
        return templates.TemplateResponse(request, "login.html", {"failed": False}, 401)
    deps = deps_of(request)
    deps.directory.remember(session_id)
    decision = ToolCallDecision(
        call_id=call_id,
        verdict=answer,
        approver=identity,
        fingerprint=fingerprint,
        comment=comment.strip()[:2_000] or None,
        session_id=session_id,
        result=(result.strip()[:4_000] or None) if answer == "happened" else None,
    )
    try:
        await deps.sessions.decide_tool_call(session_id, decision)
    except (WorkflowUpdateFailedError, RPCError) as err:
        api = _api_error(err, session_id)
        return _back(error=api.code, message=api.message)
    return _back(session=session_id, call=call_id)


def _edited(text: str, original: dict[str, JsonValue]) -> dict[str, JsonValue] | None:
    """The arguments a person typed, or None when they are the model's (or left empty)."""
    if not text.strip():
        return None
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError("they must be a JSON object")
    return None if value == original else value


async def _call_outcome(deps: ServiceDeps, session_id: str, call_id: str) -> ToolCallDecided | None:
    try:
        listing = await deps.sessions.tool_approvals(session_id)
    except RPCError:
        return None
    return next((d for d in listing.decided if d.call_id == call_id), None)
