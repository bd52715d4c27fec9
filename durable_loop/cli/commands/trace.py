"""``durable-loop trace``: a per-turn table of a session from history plus the store."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from durable_loop.cli.commands.options import Address, ApiKey, DbUrl, Namespace, WebUiUrl

if TYPE_CHECKING:
    from durable_loop.client.trace.models import Trace


def trace(
    session_id: Annotated[str, typer.Argument(help="Session id (workflow id session-<ID>).")],
    address: Address = None,
    namespace: Namespace = None,
    api_key: ApiKey = None,
    web_ui_url: WebUiUrl = None,
    db_url: DbUrl = None,
    no_store: Annotated[
        bool,
        typer.Option(
            "--no-store",
            help="Use workflow history only (no user texts, no results only the store holds).",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the trace as JSON.")] = False,
    full_args: Annotated[
        bool,
        typer.Option(
            "--full-args", help="Show each call's arguments whole (default: 200 characters)."
        ),
    ] = False,
    full: Annotated[
        bool,
        typer.Option(
            "--full",
            help="Show each reply and each call's arguments whole (default: 300 and 200 "
            "characters).",
        ),
    ] = False,
) -> None:
    """Show a session's messages and turns, and who decided what.

    Each message with its status and reply, and its turns (numbered across the session):
    model, LLM time, tokens, plan fingerprint, tool calls with their arguments and
    results, sub-agents, each model tried; between them the decisions, budget changes,
    model switches, cancels and refusals; across all runs (continue-as-new)."""
    import asyncio

    from durable_loop.worker.settings import WorkerSettings

    settings = WorkerSettings.load(
        temporal={
            "address": address,
            "namespace": namespace,
            "api_key": api_key,
            "web_ui_url": web_ui_url,
        },
        db_url=db_url,
    )
    from durable_loop.client.trace.arguments import ARGS_CHARS
    from durable_loop.client.trace.replies import REPLY_CHARS

    args_chars = None if full_args or full else ARGS_CHARS
    reply_chars = None if full else REPLY_CHARS
    result = asyncio.run(
        _load(
            session_id,
            settings,
            use_store=not no_store,
            args_chars=args_chars,
            reply_chars=reply_chars,
        )
    )
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
        return
    from durable_loop.client.trace.render import print_trace

    print_trace(result)


async def _load(
    session_id: str,
    settings: WorkerSettings,
    *,
    use_store: bool,
    args_chars: int | None,
    reply_chars: int | None,
) -> Trace:
    from durable_loop.cli.errors import reading_session
    from durable_loop.client.connect import connect
    from durable_loop.client.trace.fetch import load_trace

    client = await connect(settings.temporal)
    with reading_session(session_id, settings.temporal.namespace, store_hint=", or --no-store"):
        return await load_trace(
            client,
            session_id,
            db_url=settings.db_url if use_store else None,
            ui_url=settings.temporal.ui_url(),
            args_chars=args_chars,
            reply_chars=reply_chars,
        )


if TYPE_CHECKING:
    from durable_loop.worker.settings import WorkerSettings
