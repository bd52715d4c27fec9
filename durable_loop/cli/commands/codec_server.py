"""``durable-loop codec-server``: decrypt payloads for the Temporal Web UI and CLI.

Keys come from DURABLE_LOOP_CODEC_KEYS (the same variable the workers read), tokens from
DURABLE_LOOP_CODEC_TOKENS (``token=identity,...``) or a tokens file. ``--new-key ID``
prints a fresh key entry to put in front of the list when rotating.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Annotated

import typer

from durable_loop.cli.codes import CliCode
from durable_loop.core.errors import ErrorCode

KEYS_ENV = "DURABLE_LOOP_CODEC_KEYS"
TOKENS_ENV = "DURABLE_LOOP_CODEC_TOKENS"
TOKENS_FILE_ENV = "DURABLE_LOOP_CODEC_TOKENS_FILE"
ORIGINS_ENV = "DURABLE_LOOP_CODEC_UI_ORIGINS"
DEFAULT_ORIGINS = ["http://localhost:8233", "http://127.0.0.1:8233"]


def codec_server(
    host: Annotated[str, typer.Option("--host", help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="HTTP port.")] = 8081,
    ui_origin: Annotated[
        list[str] | None,
        typer.Option(
            "--ui-origin",
            help=f"Web UI origin allowed by CORS (repeatable). Env: {ORIGINS_ENV} "
            f"(comma-separated). Default: {', '.join(DEFAULT_ORIGINS)}.",
            show_default=False,
        ),
    ] = None,
    tokens_file: Annotated[
        Path | None,
        typer.Option(
            "--tokens-file",
            help=f"File of TOKEN=IDENTITY lines. Env: {TOKENS_FILE_ENV}; inline: {TOKENS_ENV}.",
            show_default=False,
        ),
    ] = None,
    new_key: Annotated[
        str | None,
        typer.Option(
            "--new-key",
            help="Print a new random key entry ID:BASE64 for DURABLE_LOOP_CODEC_KEYS and exit.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Serve Temporal's codec protocol (POST /decode, /encode) with bearer-token auth."""
    from durable_loop.cli.errors import CliError
    from durable_loop.client.codec.keys import CodecError

    try:
        if new_key is not None:
            from durable_loop.client.codec.keys import new_key as make_key

            typer.echo(make_key(new_key))
            return
        app = build_app(os.environ, tokens_file=tokens_file, origins=ui_origin)
    except CodecError as err:
        raise CliError(err.code, err.message) from None
    from durable_loop.cli.http_serving import run_on_port, serve_app

    async def announce_and_serve(sock: socket.socket) -> None:
        typer.echo(f"codec server on http://{host}:{port} (POST /decode, /encode)")
        await serve_app(app, sock)

    run_on_port(host, port, announce_and_serve)


def build_app(  # type: ignore[no-untyped-def]
    environ: os._Environ[str] | dict[str, str],
    *,
    tokens_file: Path | None = None,
    origins: list[str] | None = None,
):
    """The codec app from the environment; refuses to start without keys or tokens."""
    from durable_loop.cli.errors import CliError
    from durable_loop.client.codec.aes import AesGcmCodec
    from durable_loop.client.codec.keys import CodecError, KeyRing
    from durable_loop.service.auth import TokenBook, TokenError, load_tokens
    from durable_loop.service.codec_server import create_codec_app

    keys = environ.get(KEYS_ENV, "").strip()
    if not keys:
        raise CodecError(ErrorCode.CODEC_CONFIG, f"set {KEYS_ENV} to the keys the workers use")
    file = tokens_file or (Path(environ[TOKENS_FILE_ENV]) if environ.get(TOKENS_FILE_ENV) else None)
    try:
        tokens = load_tokens(environ.get(TOKENS_ENV), file)
    except TokenError as err:
        raise CliError(err.code, str(err)) from None
    if not tokens:
        raise CliError(
            CliCode.NO_CODEC_TOKENS,
            f"set {TOKENS_ENV}=TOKEN=IDENTITY,... or --tokens-file: the codec server "
            "decrypts for token holders only",
        )
    listed = [o.strip() for o in environ.get(ORIGINS_ENV, "").split(",") if o.strip()]
    allowed = origins or listed or DEFAULT_ORIGINS
    return create_codec_app(
        AesGcmCodec(KeyRing.parse(keys)), TokenBook(tokens), allowed_origins=allowed
    )
