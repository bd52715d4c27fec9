"""The FastAPI application: the JSON API and the approval pages over one set of deps."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, Request, Response
from fastapi.staticfiles import StaticFiles

from durable_loop.core.errors import ErrorCode
from durable_loop.service import api, pages
from durable_loop.service.deps import DepsFactory, ServiceDeps
from durable_loop.service.errors import ApiError, ErrorBody, install_handlers

HERE = Path(__file__).parent


def create_app(deps: ServiceDeps | None = None, *, open_deps: DepsFactory | None = None) -> FastAPI:
    """Pass ready ``deps`` (tests, embedding), or ``open_deps`` to build them on startup."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if open_deps is None:
            yield
            return
        async with open_deps() as opened:
            app.state.deps = opened
            yield

    app = FastAPI(
        title="durable-loop",
        summary="Sessions, messages, proposals, decisions and traces of durable LLM sessions",
        version="1",
        lifespan=lifespan,
        responses={401: {"model": ErrorBody}, 422: {"model": ErrorBody}},
    )
    app.state.deps = deps
    install_handlers(app)

    @app.middleware("http")
    async def limit_body(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        declared = request.headers.get("content-length")
        limit = request.app.state.deps.limits.max_body_bytes
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            from fastapi.responses import JSONResponse

            error = ApiError(413, ErrorCode.BODY_TOO_LARGE, f"the body is over {limit} bytes")
            body = {"error": {"code": error.code, "message": error.message}}
            return JSONResponse(status_code=413, content=body)
        return await call_next(request)

    app.include_router(api.router)
    app.include_router(pages.router)
    app.mount("/ui/static", StaticFiles(directory=HERE / "static"), name="static")

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    return app
