"""``durable-loop serve``: the HTTP service (JSON endpoints + approval page) under uvicorn."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from durable_loop.cli.codes import CliCode
from durable_loop.cli.commands.options import (
    Address,
    ApiKey,
    DbUrl,
    Namespace,
    TaskQueue,
    WebUiUrl,
)

if TYPE_CHECKING:
    import socket
    from contextlib import AbstractAsyncContextManager

    from durable_loop.service.deps import ServiceDeps, ServiceLimits
    from durable_loop.worker.settings import WorkerSettings

DEFAULT_PORT = 8090
"""Not 8080: `durable-loop local-llm` and the default ``LlmEndpoint.base_url`` use it."""
TOKENS_ENV = "DURABLE_LOOP_API_TOKENS"
TOKENS_FILE_ENV = "DURABLE_LOOP_API_TOKENS_FILE"


def serve(
    host: Annotated[str, typer.Option("--host", help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="HTTP port.")] = DEFAULT_PORT,
    tokens_file: Annotated[
        Path | None,
        typer.Option(
            "--tokens-file",
            help=f"File of TOKEN=IDENTITY lines. Env: {TOKENS_FILE_ENV}; inline tokens: "
            f"{TOKENS_ENV}, e.g. token1=alice,token2=bob.",
            show_default=False,
        ),
    ] = None,
    max_message_chars: Annotated[
        int, typer.Option("--max-message-chars", help="Longest message accepted.", min=1)
    ] = 32_000,
    reply_timeout: Annotated[
        float, typer.Option("--reply-timeout", help="Seconds a POST waits for the reply.")
    ] = 300,
    allow_unbound_decisions: Annotated[
        bool,
        typer.Option(
            "--allow-unbound-decisions",
            help="Accept decisions on proposals and tool calls without a fingerprint "
            "(trusted callers only).",
        ),
    ] = False,
    address: Address = None,
    namespace: Namespace = None,
    api_key: ApiKey = None,
    web_ui_url: WebUiUrl = None,
    task_queue: TaskQueue = None,
    db_url: DbUrl = None,
) -> None:
    """Serve sessions, messages, proposals, decisions and traces over HTTP (OpenAPI at
    /docs) and the approval page at /ui/approvals, with bearer-token auth."""
    import os

    from durable_loop.cli.errors import CliError
    from durable_loop.cli.http_serving import run_on_port
    from durable_loop.cli.tracing import HTTP_SERVICE_NAME, client_tracing
    from durable_loop.service.auth import TokenBook, TokenError, load_tokens
    from durable_loop.service.deps import ServiceLimits
    from durable_loop.worker.settings import WorkerSettings

    file = tokens_file or (
        Path(os.environ[TOKENS_FILE_ENV]) if os.environ.get(TOKENS_FILE_ENV) else None
    )
    try:
        tokens = load_tokens(os.environ.get(TOKENS_ENV), file)
    except TokenError as err:
        raise CliError(err.code, str(err)) from None
    if not tokens:
        raise CliError(
            CliCode.NO_API_TOKENS,
            f"set {TOKENS_ENV}=TOKEN=IDENTITY,... or pass --tokens-file: the service "
            "refuses every request without a token",
        )
    settings = WorkerSettings.load(
        temporal={
            "address": address,
            "namespace": namespace,
            "api_key": api_key,
            "web_ui_url": web_ui_url,
        },
        task_queue=task_queue,
        db_url=db_url,
    )
    limits = ServiceLimits(
        max_message_chars=max_message_chars,
        reply_timeout_s=reply_timeout,
        allow_unbound_decisions=allow_unbound_decisions,
    )
    book = TokenBook(tokens)
    with client_tracing(HTTP_SERVICE_NAME):
        run_on_port(host, port, lambda sock: run_service(sock, settings, book, limits))


async def run_service(
    sock: socket.socket, settings: WorkerSettings, tokens: object, limits: ServiceLimits
) -> None:
    """Connect (``TEMPORAL_UNREACHABLE`` before anything is announced), then serve."""
    from durable_loop.cli.http_serving import serve_app
    from durable_loop.service import create_app

    async with open_service_deps(settings, tokens, limits) as deps:
        host, port = sock.getsockname()[:2]
        typer.echo(f"durable-loop service on http://{host}:{port} (approvals: /ui/approvals)")
        await serve_app(create_app(deps), sock)


def open_service_deps(
    settings: WorkerSettings, tokens: object, limits: ServiceLimits
) -> AbstractAsyncContextManager[ServiceDeps]:
    from contextlib import asynccontextmanager

    from durable_loop.client.connect import connect
    from durable_loop.client.sessions import SessionClient
    from durable_loop.service.auth import TokenBook
    from durable_loop.service.deps import ServiceDeps
    from durable_loop.store import StoreConfig
    from durable_loop.store.stream import StreamStore
    from durable_loop.store.workspace import open_workspace_store

    assert isinstance(tokens, TokenBook)

    @asynccontextmanager
    async def opened():  # type: ignore[no-untyped-def]
        client = await connect(settings.temporal)
        workspace = open_workspace_store(StoreConfig(url=settings.db_url))
        chunks = StreamStore(workspace.db)
        try:
            yield ServiceDeps(
                sessions=SessionClient(client, task_queue=settings.task_queue),
                tokens=tokens,
                workspace=workspace,
                db_url=settings.db_url,
                limits=limits,
                ui_url=settings.temporal.ui_url(),
                chunks=chunks,
            )
        finally:
            await workspace.close()

    return opened()
