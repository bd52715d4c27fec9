"""The FastAPI application and what its handlers share (:class:`ServiceDeps`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

from fastapi import FastAPI, Request, Response
from fastapi.staticfiles import StaticFiles

from durable_loop.client.sessions import SessionClient
from durable_loop.service.auth import TokenBook
from durable_loop.service.directory import SessionDirectory
from durable_loop.service.errors import ApiError, ErrorBody, install_handlers
from durable_loop.store.stream import StreamStore
from durable_loop.store.workspace import WorkspaceStore

HERE = Path(__file__).parent


@dataclass(frozen=True)
class ServiceLimits:
    max_message_chars: int = 32_000
    max_body_bytes: int = 256_000
    reply_timeout_s: float = 300.0


@dataclass
class ServiceDeps:
    sessions: SessionClient
    tokens: TokenBook
    workspace: WorkspaceStore | None = None
    """Current facts for the approval diff; None shows the change set without a diff."""
    db_url: str | None = None
    """Transcript store for ``/trace``; None reads history only."""
    limits: ServiceLimits = field(default_factory=ServiceLimits)
    ui_url: str | None = None
    """The Temporal Web UI, for links."""
    chunks: StreamStore | None = None
    """The worker's store of streamed reply text; the SSE endpoint forwards it."""
    directory: SessionDirectory = field(init=False)

    def __post_init__(self) -> None:
        self.directory = SessionDirectory(self.sessions)

    def web_ui_link(self, workflow_id: str) -> str | None:
        if self.ui_url is None:
            return None
        namespace = self.sessions.client.namespace
        return f"{self.ui_url}/namespaces/{namespace}/workflows/{workflow_id}"


DepsFactory = Callable[[], AbstractAsyncContextManager[ServiceDeps]]


def create_app(deps: ServiceDeps | None = None, *, open_deps: DepsFactory | None = None) -> FastAPI:
    """Pass ready ``deps`` (tests, embedding), or ``open_deps`` to build them on startup."""
    from durable_loop.service import api, pages

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

            error = ApiError(413, "BODY_TOO_LARGE", f"the body is over {limit} bytes")
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
