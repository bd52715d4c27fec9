"""Every refusal is a 4xx/5xx with ``{"error": {"code", "message"}}`` and changes nothing."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException
from temporalio.client import WorkflowQueryFailedError, WorkflowUpdateFailedError
from temporalio.service import RPCError, RPCStatusCode

from durable_loop.client.proposals import ProposalNotPending
from durable_loop.client.refusals import refusal_of
from durable_loop.client.tool_approvals import ToolCallNotPending
from durable_loop.core.errors import ConfigError, DurableLoopError, ErrorCode
from durable_loop.core.validation_text import fields_text


class ErrorDetail(BaseModel):
    code: str
    message: str


class ErrorBody(BaseModel):
    error: ErrorDetail


class ApiError(DurableLoopError):
    """A refusal of the HTTP API: its status, code and message become the error body."""

    code: ErrorCode
    show_code = True

    def __init__(self, status: int, code: ErrorCode, message: str) -> None:
        super().__init__(code, message)
        self.status = status


DECISION_STATUS = {
    ErrorCode.UNKNOWN_PROPOSAL: 404,
    ErrorCode.UNKNOWN_TOOL_CALL: 404,
    ErrorCode.UNKNOWN_MESSAGE: 404,
    ErrorCode.INVALID_ARGS: 422,
    ErrorCode.ARGUMENTS_TOO_LARGE: 413,
    ErrorCode.ALREADY_DECIDED: 409,
    ErrorCode.FINGERPRINT_MISMATCH: 409,
    ErrorCode.SESSION_CLOSED: 409,
    ErrorCode.EXPIRED: 410,
    ErrorCode.INVALID_DECISION: 422,
    ErrorCode.INVALID_SETTING: 422,
    ErrorCode.APPROVER_NOT_ALLOWED: 403,
}


def refusal(err: WorkflowUpdateFailedError) -> ApiError:
    """An Update refused by the workflow: the code is the failure's type."""
    refused = refusal_of(err)
    if refused.code is None:
        return ApiError(409, ErrorCode.UPDATE_REFUSED, refused.text)
    code = refused.code
    if code is ErrorCode.ALREADY_DECIDED and refused.message.endswith(" is expired"):
        code = ErrorCode.EXPIRED
    return ApiError(DECISION_STATUS.get(code, 409), code, refused.message)


def not_pending(err: ProposalNotPending | ToolCallNotPending) -> ApiError:
    code = err.code
    if code is ErrorCode.ALREADY_DECIDED and err.message.endswith(" is already expired"):
        code = ErrorCode.EXPIRED
    return ApiError(DECISION_STATUS.get(code, 409), code, err.message)


def session_not_found(session_id: str) -> ApiError:
    return ApiError(404, ErrorCode.SESSION_NOT_FOUND, f"no session {session_id!r}")


def from_rpc(err: RPCError, session_id: str | None) -> ApiError:
    if err.status == RPCStatusCode.NOT_FOUND and session_id is not None:
        return session_not_found(session_id)
    if err.status in (RPCStatusCode.UNAVAILABLE, RPCStatusCode.DEADLINE_EXCEEDED):
        return ApiError(503, ErrorCode.TEMPORAL_UNAVAILABLE, " ".join(err.message.split()))
    return ApiError(
        502, ErrorCode.TEMPORAL_ERROR, f"{err.status.name}: {' '.join(err.message.split())}"
    )


def _body(status: int, code: ErrorCode, message: str, headers: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    content = ErrorBody(error=ErrorDetail(code=code, message=message)).model_dump()
    return JSONResponse(status_code=status, content=content, headers=headers)


def _validation_message(err: RequestValidationError) -> tuple[ErrorCode, str]:
    first = err.errors()[0]
    if any(e.get("type") == "json_invalid" for e in err.errors()):
        return ErrorCode.INVALID_JSON, f"the body is not valid JSON: {first.get('msg', '')}"
    if tuple(first.get("loc", ())) == ("body",) and isinstance(first.get("input"), bytes):
        return ErrorCode.INVALID_JSON, "the body must be a JSON object sent as application/json"
    return ErrorCode.INVALID_REQUEST, fields_text(err.errors(), skip=("body",))


def install_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api(request: Request, err: ApiError) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if err.status == 401 else None
        return _body(err.status, err.code, err.message, headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, err: RequestValidationError) -> JSONResponse:
        code, message = _validation_message(err)
        return _body(400 if code is ErrorCode.INVALID_JSON else 422, code, message)

    @app.exception_handler(ConfigError)
    async def _config(request: Request, err: ConfigError) -> JSONResponse:
        return _body(422, err.code, err.message)

    @app.exception_handler(WorkflowUpdateFailedError)
    async def _refused(request: Request, err: WorkflowUpdateFailedError) -> JSONResponse:
        api = refusal(err)
        return _body(api.status, api.code, api.message)

    @app.exception_handler(ProposalNotPending)
    @app.exception_handler(ToolCallNotPending)
    async def _not_pending(
        request: Request, err: ProposalNotPending | ToolCallNotPending
    ) -> JSONResponse:
        api = not_pending(err)
        return _body(api.status, api.code, api.message)

    @app.exception_handler(WorkflowQueryFailedError)
    async def _query(request: Request, err: WorkflowQueryFailedError) -> JSONResponse:
        return _body(409, ErrorCode.QUERY_FAILED, str(err))

    @app.exception_handler(RPCError)
    async def _rpc(request: Request, err: RPCError) -> JSONResponse:
        api = from_rpc(err, request.path_params.get("session_id"))
        return _body(api.status, api.code, api.message)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, err: StarletteHTTPException) -> JSONResponse:
        code = {404: ErrorCode.NOT_FOUND, 405: ErrorCode.METHOD_NOT_ALLOWED}.get(
            err.status_code, ErrorCode.HTTP_ERROR
        )
        return _body(err.status_code, code, str(err.detail))
