from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest_asyncio
import uvicorn

from durable_loop.cli.devserver import free_port
from durable_loop.service import ServiceDeps, create_app
from durable_loop.service.auth import TokenBook
from durable_loop.service.deps import ServiceLimits
from tests.client.kit import workspace_store

TOKENS = {"alice-token-0001": "alice", "bob-token-0002": "bob"}
ALICE = {"Authorization": "Bearer alice-token-0001"}
BOB = {"Authorization": "Bearer bob-token-0002"}


@pytest_asyncio.fixture
async def ws(store_url):
    store = workspace_store(store_url)
    yield store
    await store.close()


@pytest_asyncio.fixture
async def service(ws, store_url):
    """``async with service(w) as http:`` an httpx client on the app (ASGI transport)."""

    @asynccontextmanager
    async def open_service(w, chunks=None, **limits) -> AsyncIterator[httpx.AsyncClient]:
        deps = ServiceDeps(
            sessions=w.sessions,
            tokens=TokenBook(TOKENS),
            workspace=ws,
            db_url=store_url,
            limits=ServiceLimits(**limits),
            chunks=chunks,
        )
        transport = httpx.ASGITransport(app=create_app(deps))
        async with httpx.AsyncClient(transport=transport, base_url="http://service") as http:
            yield http

    return open_service


@pytest_asyncio.fixture
async def live_service(ws, store_url):
    """``async with live_service(w) as (base, deps):`` the app under uvicorn on
    127.0.0.1:<free port>, in this process (its memory is this process's)."""

    @asynccontextmanager
    async def serve(w, **limits) -> AsyncIterator[tuple[str, ServiceDeps]]:
        deps = ServiceDeps(
            sessions=w.sessions,
            tokens=TokenBook(TOKENS),
            workspace=ws,
            db_url=store_url,
            limits=ServiceLimits(**limits),
        )
        port = free_port()
        config = uvicorn.Config(create_app(deps), host="127.0.0.1", port=port, log_level="warning")
        server = uvicorn.Server(config)
        task = asyncio.create_task(server.serve())
        try:
            for _ in range(250):
                if server.started:
                    break
                await asyncio.sleep(0.02)
            assert server.started, "uvicorn did not start"
            yield f"http://127.0.0.1:{port}", deps
        finally:
            server.should_exit = True
            await task

    return serve
