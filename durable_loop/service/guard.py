"""The service's gate, before any handler reads a byte of the body.

A request to the JSON API (``/v1/...``) without a valid bearer token is answered 401 from
its headers alone: the body is never read. Every body is bounded as it streams in, whether
it declares a ``Content-Length`` or comes chunked: past ``max_body_bytes`` the request is
answered 413 ``BODY_TOO_LARGE`` at once and the rest is never read (the server then closes
the connection instead of draining it).
"""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from durable_loop.core.errors import ErrorCode
from durable_loop.service.auth import TokenBook, authenticate
from durable_loop.service.errors import ApiError

API_PREFIX = "/v1/"


class _Answered(Exception):
    """Raised into the app from ``receive`` once the gate has answered the request."""


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


def _route_path(scope: Scope) -> str:
    """The path the routes match (without the ``root_path`` of a proxy's mount)."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    return path[len(root) :] if root and path.startswith(root) else path


async def _refuse(send: Send, error: ApiError) -> None:
    body = json.dumps({"error": {"code": error.code, "message": error.message}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    if error.status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": error.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _too_large(limit: int) -> ApiError:
    return ApiError(413, ErrorCode.BODY_TOO_LARGE, f"the body is over {limit} bytes")


class RequestGate:
    """Pure ASGI middleware: token check on ``/v1/`` and the body bound, in that order."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        deps = scope["app"].state.deps
        if _route_path(scope).startswith(API_PREFIX):
            book: TokenBook = deps.tokens
            try:
                authenticate(book, _header(scope, b"authorization"))
            except ApiError as refused:
                await _refuse(send, refused)
                return
        limit: int = deps.limits.max_body_bytes
        declared = (_header(scope, b"content-length") or "0").strip()
        if not (declared.isascii() and declared.isdigit()) or int(declared) > limit:
            await _refuse(send, _too_large(limit))
            return
        await _Bounded(self.app, limit)(scope, receive, send)


class _Bounded:
    """One request: counts body bytes as the app receives them."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app, self.limit = app, limit
        self.received = 0
        self.started = False
        self.answered = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def counted_receive() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                self.received += len(message.get("body", b""))
                if self.received > self.limit:
                    if not self.started:
                        self.answered = True
                        await _refuse(send, _too_large(self.limit))
                    raise _Answered
            return message

        async def guarded_send(message: Message) -> None:
            if self.answered:
                return  # the gate answered; the app's own reply to the error goes nowhere
            if message["type"] == "http.response.start":
                self.started = True
            await send(message)

        try:
            await self.app(scope, counted_receive, guarded_send)
        except Exception:
            if not self.answered:  # the app's way out of the refused read, or its own error
                raise
