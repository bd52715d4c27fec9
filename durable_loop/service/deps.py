"""What the service's handlers share: the session client, tokens, stores and limits."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field

from fastapi import Request

from durable_loop.client.sessions import SessionClient
from durable_loop.client.workspace import WorkspaceView, read_workspace
from durable_loop.core.errors import ErrorCode
from durable_loop.service.auth import TokenBook
from durable_loop.service.directory import SessionDirectory
from durable_loop.service.errors import ApiError
from durable_loop.store.stream import StreamStore
from durable_loop.store.workspace import WorkspaceStore


@dataclass(frozen=True)
class ServiceLimits:
    max_message_chars: int = 32_000
    max_body_bytes: int = 256_000
    reply_timeout_s: float = 300.0
    allow_unbound_decisions: bool = False
    """Accept proposal decisions without a fingerprint (bound to the content pending at
    the time): only for trusted callers that cannot show a person the content."""


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

    async def workspace_view(self, session_id: str, audit_rows: int) -> WorkspaceView:
        """The session's workspace from the service's store (its id from the session)."""
        if self.workspace is None:
            raise ApiError(
                404, ErrorCode.STORE_NOT_FOUND, "this service has no store: start it with --db-url"
            )
        workspace_id = await self.sessions.workspace_id(session_id)
        self.directory.remember(session_id)
        return await read_workspace(
            self.workspace, workspace_id, session_id=session_id, audit_rows=audit_rows
        )

    def web_ui_link(self, workflow_id: str) -> str | None:
        if self.ui_url is None:
            return None
        namespace = self.sessions.client.namespace
        return f"{self.ui_url}/namespaces/{namespace}/workflows/{workflow_id}"


DepsFactory = Callable[[], AbstractAsyncContextManager[ServiceDeps]]


def deps_of(request: Request) -> ServiceDeps:
    deps: ServiceDeps = request.app.state.deps
    return deps
