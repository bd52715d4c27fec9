"""What the service's handlers share: the session client, tokens, stores and limits."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field

from fastapi import Request

from durable_loop.client.sessions import SessionClient
from durable_loop.service.auth import TokenBook
from durable_loop.service.directory import SessionDirectory
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

    def web_ui_link(self, workflow_id: str) -> str | None:
        if self.ui_url is None:
            return None
        namespace = self.sessions.client.namespace
        return f"{self.ui_url}/namespaces/{namespace}/workflows/{workflow_id}"


DepsFactory = Callable[[], AbstractAsyncContextManager[ServiceDeps]]


def deps_of(request: Request) -> ServiceDeps:
    deps: ServiceDeps = request.app.state.deps
    return deps
