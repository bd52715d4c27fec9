"""What a worker's activities are built from: the store, the tools and the HTTP client."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

import httpx

from durable_loop.core.registry import ToolRegistry
from durable_loop.store import TranscriptStore
from durable_loop.store.workspace import WorkspaceStore


@dataclass
class WorkerDeps:
    store: TranscriptStore
    registry: ToolRegistry
    http: httpx.AsyncClient = field(default_factory=lambda: new_http_client())
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    workspace: WorkspaceStore | None = None
    """Settles proposals; default: a workspace store on the transcript store's engine."""


DEFAULT_HTTP_CONNECTIONS = 200


def new_http_client(max_connections: int | None = None) -> httpx.AsyncClient:
    """One pooled client per worker; its own retries are off because Temporal retries.

    ``max_connections`` should be at least the worker's activity slots: every LLM call
    holds a connection for its whole duration, so a smaller pool silently caps how many
    calls run at once below ``max_concurrent_activities`` (the rest wait for a connection).
    """
    connections = max(max_connections or 0, DEFAULT_HTTP_CONNECTIONS)
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=50)
    # The limits belong on the transport: httpx ignores a client's ``limits`` when it is
    # given a transport, which left every worker at httpx's default of 100 connections.
    transport = httpx.AsyncHTTPTransport(retries=0, limits=limits)
    return httpx.AsyncClient(transport=transport, timeout=120.0)
