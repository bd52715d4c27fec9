"""The codec server: Temporal's HTTP codec protocol, so the Web UI and CLI can show
decrypted payloads to people holding a token, without the keys leaving this process.

``POST /decode`` and ``POST /encode`` (also under ``/{namespace}/``, the CLI's template)
take and return ``{"payloads": [...]}`` in proto3 JSON (bytes as base64). Every call
needs ``Authorization: Bearer <token>``; CORS admits only the configured Web UI origins,
so another site's page cannot use a signed-in browser to decrypt.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence

from google.protobuf.json_format import MessageToDict, ParseDict, ParseError
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from temporalio.api.common.v1 import Payloads

from durable_loop.client.codec.aes import AesGcmCodec
from durable_loop.client.codec.keys import CodecError
from durable_loop.core.errors import ErrorCode
from durable_loop.service.auth import TokenBook

MAX_BODY_BYTES = 32 * 1024 * 1024
CODEC_HEADERS = ["Content-Type", "X-Namespace", "Authorization"]
log = logging.getLogger("durable_loop.client.codec")


def _error(status: int, code: ErrorCode, message: str) -> JSONResponse:
    return JSONResponse({"code": code, "message": message}, status_code=status)


def _identity(request: Request, tokens: TokenBook) -> str | None:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return tokens.identity(token.strip()) if scheme.lower() == "bearer" else None


async def _payloads(request: Request) -> Payloads | JSONResponse:
    size = int(request.headers.get("content-length") or 0)
    if size > MAX_BODY_BYTES:
        return _error(413, ErrorCode.CODEC_BAD_REQUEST, f"body over {MAX_BODY_BYTES} bytes")
    try:
        body = json.loads(await request.body())
        return ParseDict(body, Payloads(), ignore_unknown_fields=True)
    except (ValueError, ParseError, TypeError, AttributeError) as err:
        message = f'expected {{"payloads": [...]}} in proto3 JSON: {err}'
        return _error(400, ErrorCode.CODEC_BAD_REQUEST, message[:300])


def create_codec_app(
    codec: AesGcmCodec, tokens: TokenBook, *, allowed_origins: Sequence[str] = ()
) -> Starlette:
    """The ASGI app; serve it with uvicorn (``durable-loop codec-server``)."""

    async def convert(request: Request) -> JSONResponse:
        identity = _identity(request, tokens)
        if identity is None:
            return _error(
                401, ErrorCode.UNAUTHENTICATED, "send Authorization: Bearer <codec token>"
            )
        parsed = await _payloads(request)
        if isinstance(parsed, JSONResponse):
            return parsed
        action = request.url.path.rsplit("/", 1)[-1]
        namespace = request.path_params.get("namespace") or request.headers.get("x-namespace")
        try:
            if action == "decode":
                out = await codec.decode(parsed.payloads)
            else:
                out = await codec.encode(parsed.payloads)
        except CodecError as err:
            return _error(422, err.code, err.message)
        log.info(
            "codec %s of %d payload(s) for %s (namespace %s)",
            action,
            len(out),
            identity,
            namespace or "-",
        )
        return JSONResponse(MessageToDict(Payloads(payloads=out)) or {"payloads": []})

    routes = [
        Route(path, convert, methods=["POST"])
        for path in ("/decode", "/encode", "/{namespace}/decode", "/{namespace}/encode")
    ]
    middleware = [
        Middleware(
            CORSMiddleware,
            allow_origins=list(allowed_origins),
            allow_methods=["POST"],
            allow_headers=CODEC_HEADERS,
            allow_credentials=True,
            max_age=600,
        )
    ]
    return Starlette(routes=routes, middleware=middleware)
