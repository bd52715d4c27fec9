"""Serving an ASGI app from a command: the port is bound before anything is announced, so
a busy port is one coded line and the announcement is never followed by a bind error."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from durable_loop.cli.codes import CliCode
from durable_loop.cli.errors import CliError

if TYPE_CHECKING:
    from starlette.types import ASGIApp


def bind_port(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` (``PORT_IN_USE`` when something listens there)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as err:
        sock.close()
        raise CliError(
            CliCode.PORT_IN_USE,
            f"cannot listen on {host}:{port} ({err.strerror}): pick another port with --port",
        ) from None
    return sock


def run_on_port(
    host: str, port: int, main: Callable[[socket.socket], Coroutine[Any, Any, None]]
) -> None:
    """Bind ``host:port``, then run ``main(sock)`` until it returns or Ctrl-C."""
    sock = bind_port(host, port)
    try:
        asyncio.run(main(sock))
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()


async def serve_app(app: ASGIApp, sock: socket.socket) -> None:
    """Serve ``app`` on the bound ``sock`` until Ctrl-C or SIGTERM."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, log_level="info"))
    await server.serve(sockets=[sock])
