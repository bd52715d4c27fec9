"""``durable-loop trace``: a per-turn table of a session from history plus the store."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from durable_loop.cli.commands.options import Address, ApiKey, DbUrl, Namespace, WebUiUrl
from durable_loop.core.errors import ErrorCode

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
        bool, typer.Option("--no-store", help="Use workflow history only.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the trace as JSON.")] = False,
) -> None:
    """Show every turn of a session: LLM latency, model, tool calls and their results,
    tokens and plan fingerprint, across all runs (continue-as-new)."""
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
    result = asyncio.run(_load(session_id, settings, use_store=not no_store))
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
        return
    from durable_loop.client.trace.render import print_trace

    print_trace(result)


async def _load(session_id: str, settings: WorkerSettings, *, use_store: bool) -> Trace:
    from temporalio.service import RPCError, RPCStatusCode

    from durable_loop.cli.errors import CliError, namespace_missing
    from durable_loop.client.connect import connect
    from durable_loop.client.trace.fetch import StoreMissing, load_trace

    client = await connect(settings.temporal)
    try:
        return await load_trace(
            client,
            session_id,
            db_url=settings.db_url if use_store else None,
            ui_url=settings.temporal.ui_url(),
        )
    except StoreMissing as err:
        raise CliError(
            ErrorCode.STORE_NOT_FOUND,
            f"no transcript store at {err}: pass --db-url (or set DURABLE_LOOP_DB_URL) to the "
            "worker's database, or --no-store",
        ) from None
    except RPCError as err:
        if err.status == RPCStatusCode.NOT_FOUND and not namespace_missing(err.message):
            raise CliError(
                ErrorCode.SESSION_NOT_FOUND,
                f"no workflow session-{session_id} in namespace {settings.temporal.namespace}",
            ) from None
        raise


if TYPE_CHECKING:
    from durable_loop.worker.settings import WorkerSettings
