"""Bearer tokens configured on the server, each naming an identity (``token=alice``).

A request to the API without a valid token is refused from its headers, before its body
is read or any handler runs (``guard.RequestGate``), so it never reaches a workflow. The
identity is what a decision records as its approver.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from pathlib import Path

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from durable_loop.core.errors import DurableLoopError, ErrorCode
from durable_loop.service.errors import ApiError

COOKIE = "durable_loop_token"
_bearer = HTTPBearer(auto_error=False, description="A token from DURABLE_LOOP_API_TOKENS")


class TokenError(DurableLoopError, ValueError):
    """Malformed bearer-token configuration (``INVALID_TOKENS``)."""

    def __init__(self, message: str) -> None:
        super().__init__(ErrorCode.INVALID_TOKENS, message)


def parse_tokens(text: str) -> dict[str, str]:
    """``token1=alice,token2=bob`` (commas or newlines; ``#`` starts a comment line)."""
    tokens: dict[str, str] = {}
    for raw in text.replace(",", "\n").splitlines():
        item = raw.strip()
        if not item or item.startswith("#"):
            continue
        token, sep, identity = item.partition("=")
        token, identity = token.strip(), identity.strip()
        if not sep or not token or not identity:
            raise TokenError(f"expected TOKEN=IDENTITY, got {item[:8]!r}...")
        if len(token) < 8:
            raise TokenError(f"the token for {identity!r} is shorter than 8 characters")
        tokens[token] = identity
    return tokens


def load_tokens(inline: str | None, path: Path | None) -> dict[str, str]:
    tokens = parse_tokens(inline or "")
    if path is not None:
        tokens.update(parse_tokens(path.read_text()))
    return tokens


class TokenBook:
    def __init__(self, tokens: Mapping[str, str]) -> None:
        self._tokens = dict(tokens)

    def identity(self, presented: str | None) -> str | None:
        if not presented:
            return None
        found = None
        for token, identity in self._tokens.items():  # no early exit: constant-ish time
            if hmac.compare_digest(token.encode(), presented.encode()):
                found = identity
        return found

    def __len__(self) -> int:
        return len(self._tokens)


def _book(request: Request) -> TokenBook:
    book: TokenBook = request.app.state.deps.tokens
    return book


def authenticate(book: TokenBook, authorization: str | None) -> str:
    """The identity of an ``Authorization: Bearer <token>`` header, or a 401 ``ApiError``.
    The request gate calls it on the headers alone, before any body is read."""
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(401, ErrorCode.UNAUTHENTICATED, "send Authorization: Bearer <token>")
    identity = book.identity(token.strip())
    if identity is None:
        raise ApiError(401, ErrorCode.INVALID_TOKEN, "the bearer token is not known to this server")
    return identity


async def require_identity(
    request: Request,
    credentials: HTTPAuthorizationCredentials | None = Depends(_bearer),
) -> str:
    """The identity for a handler (the gate has already refused a request without one);
    ``credentials`` declares the bearer scheme in the OpenAPI document."""
    return authenticate(_book(request), request.headers.get("authorization"))


def page_identity(request: Request) -> str | None:
    """The approval page keeps the token in an HttpOnly, SameSite=Strict cookie."""
    return _book(request).identity(request.cookies.get(COOKIE))
