"""The FastAPI application: the JSON API and the approval pages over one set of deps."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from durable_loop.service import api, pages, session_data_api, tool_call_api
from durable_loop.service.api_docs import install_api_docs
from durable_loop.service.deps import DepsFactory, ServiceDeps
from durable_loop.service.errors import ErrorBody, install_handlers
from durable_loop.service.guard import RequestGate

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
        docs_url=None,  # install_api_docs serves /docs and /redoc without a CDN
        redoc_url=None,
    )
    app.state.deps = deps
    install_handlers(app)

    app.add_middleware(RequestGate)

    app.include_router(api.router)
    app.include_router(tool_call_api.router)
    app.include_router(session_data_api.router)
    app.include_router(pages.router)
    app.mount("/ui/static", StaticFiles(directory=HERE / "static"), name="static")
    install_api_docs(app)

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    return app
