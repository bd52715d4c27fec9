"""MCP connections owned by the worker: one live session per server, reopened on demand.

Each connection is entered and exited by its own background task (the SDK's transports
are anyio context managers that must close in the task that opened them); activities only
send requests through it. A connection that dies (the server crashed or closed the
stream) is dropped, and the next call opens a fresh one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from types import TracebackType

import mcp.types as mcp_types
from mcp import Client, MCPError, StdioServerParameters
from mcp.client._transport import TransportStreams
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from pydantic import ValidationError

from durable_loop.core.errors import ErrorCode
from durable_loop.core.mcp import McpServerConfig, McpServerError, expand_all

log = logging.getLogger(__name__)

CONNECTION_CLOSED = -32000
MAX_LIST_PAGES = 100


def describe(err: BaseException) -> str:
    """One line for an error, looking inside exception groups."""
    if isinstance(err, BaseExceptionGroup) and err.exceptions:
        return "; ".join(describe(e) for e in err.exceptions)
    text = str(err) or type(err).__name__
    return f"{type(err).__name__}: {text}"


@asynccontextmanager
async def _http_transport(url: str, headers: dict[str, str]) -> AsyncIterator[TransportStreams]:
    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams


class McpConnection:
    def __init__(self, config: McpServerConfig, environ: Mapping[str, str]) -> None:
        self.config = config
        self._environ = environ
        self._client: Client | None = None
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def alive(self) -> bool:
        return self._client is not None and self._task is not None and not self._task.done()

    @property
    def client(self) -> Client:
        if self._client is None:
            raise McpServerError(
                ErrorCode.MCP_SERVER_DISCONNECTED, self.config.name, "the connection is closed"
            )
        return self._client

    def _transport(self) -> AbstractAsyncContextManager[TransportStreams]:
        config = self.config
        if config.command:
            params = StdioServerParameters(
                command=config.command,
                args=config.args,
                env=expand_all(config.env, self._environ, config.name) or None,
                cwd=config.cwd,
            )
            return stdio_client(params)
        headers = expand_all(config.headers, self._environ, config.name)
        return _http_transport(str(config.url), headers)

    async def open(self) -> None:
        name = self.config.name
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        transport = self._transport()
        self._task = asyncio.create_task(self._own(transport, ready), name=f"mcp-{name}")
        try:
            await asyncio.wait_for(asyncio.shield(ready), self.config.startup_timeout_s)
        except TimeoutError:
            ready.cancel()
            await self.close()
            raise McpServerError(
                ErrorCode.MCP_SERVER_START_TIMEOUT,
                name,
                f"no handshake within {self.config.startup_timeout_s}s from {self.config.where()}",
            ) from None
        except Exception as err:
            await self.close()
            raise McpServerError(
                ErrorCode.MCP_SERVER_UNAVAILABLE,
                name,
                f"cannot start or reach {self.config.where()}: {describe(err)}",
            ) from None

    async def _own(
        self, transport: AbstractAsyncContextManager[TransportStreams], ready: asyncio.Future[None]
    ) -> None:
        try:
            async with Client(transport, cache=None) as client:
                self._client = client
                ready.set_result(None)
                await self._stop.wait()
        except BaseException as err:
            if not ready.done():
                ready.set_exception(err if isinstance(err, Exception) else ConnectionError())
            elif isinstance(err, Exception) and not self._stop.is_set():
                log.warning("MCP server %r connection ended: %s", self.config.name, describe(err))
            if not isinstance(err, Exception):
                raise
        finally:
            self._client = None

    async def close(self) -> None:
        self._stop.set()
        task = self._task
        if task is None or task.done():
            return
        if self._client is None:
            task.cancel()
        try:
            await asyncio.wait_for(asyncio.shield(task), 5.0)
        except (TimeoutError, asyncio.CancelledError, Exception):
            task.cancel()
            with contextlib.suppress(BaseException):
                await task


class McpPool:
    """The worker's MCP connections, by server name."""

    def __init__(
        self, configs: Iterable[McpServerConfig], environ: Mapping[str, str] | None = None
    ) -> None:
        self.configs = {c.name: c for c in configs if c.enabled}
        self._environ = environ or {}
        self._connections: dict[str, McpConnection] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self.opened: dict[str, int] = {}
        self._background: set[asyncio.Task[None]] = set()

    def config(self, server: str) -> McpServerConfig:
        try:
            return self.configs[server]
        except KeyError:
            raise McpServerError(
                ErrorCode.MCP_CONFIG_ERROR, server, "not configured on this worker"
            ) from None

    async def connection(self, server: str) -> McpConnection:
        config = self.config(server)
        lock = self._locks.setdefault(server, asyncio.Lock())
        async with lock:
            current = self._connections.get(server)
            if current is not None and current.alive:
                return current
            if current is not None:
                await current.close()
            fresh = McpConnection(config, self._environ)
            try:
                await fresh.open()
            except asyncio.CancelledError:
                await fresh.close()  # the caller went away mid-handshake: stop the server
                raise
            self._connections[server] = fresh
            self.opened[server] = self.opened.get(server, 0) + 1
            return fresh

    async def drop(self, server: str) -> None:
        """Forget a broken connection; the next request reopens it."""
        current = self._connections.pop(server, None)
        if current is not None:
            await current.close()

    def _reopen_soon(self, server: str) -> None:
        """Restart a crashed server in the background, so its next call does not wait."""

        async def reopen() -> None:
            try:
                await self.connection(server)
            except McpServerError as err:
                log.warning("reopening failed (the next call retries): %s", err)

        task = asyncio.create_task(reopen(), name=f"mcp-reopen-{server}")
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def list_tools(self, server: str) -> list[mcp_types.Tool]:
        connection = await self.connection(server)
        tools: list[mcp_types.Tool] = []
        cursor: str | None = None
        try:
            for _ in range(MAX_LIST_PAGES):
                page = await asyncio.wait_for(
                    connection.client.list_tools(cursor=cursor),
                    self.config(server).startup_timeout_s,
                )
                tools.extend(page.tools)
                cursor = page.next_cursor
                if cursor is None:
                    break
        except TimeoutError:
            raise McpServerError(
                ErrorCode.MCP_SERVER_START_TIMEOUT, server, "tools/list did not answer"
            ) from None
        except (ValidationError, MCPError) as err:
            raise McpServerError(
                ErrorCode.MCP_BAD_LISTING, server, f"tools/list failed: {describe(err)}"
            ) from None
        return tools

    async def call(
        self, server: str, tool: str, arguments: dict[str, object]
    ) -> mcp_types.CallToolResult:
        """Call ``tool``; a dropped connection raises MCP_SERVER_DISCONNECTED and is reopened
        on the next call (the call itself is not repeated: it may have had effects)."""
        connection = await self.connection(server)
        try:
            return await connection.client.call_tool(tool, arguments)
        except MCPError as err:
            if err.code != CONNECTION_CLOSED:
                raise
            await self.drop(server)
            self._reopen_soon(server)
            raise McpServerError(
                ErrorCode.MCP_SERVER_DISCONNECTED,
                server,
                f"the connection closed during the call to {tool!r} (did the server crash?); "
                "it is reopened on the next call",
            ) from None

    async def close(self) -> None:
        for task in list(self._background):
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        for server in list(self._connections):
            await self.drop(server)

    async def __aenter__(self) -> McpPool:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
