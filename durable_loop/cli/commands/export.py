"""``durable-loop export SESSION > bundle.json``: a session as a portable bundle."""

from __future__ import annotations

from typing import Annotated

import typer

from durable_loop.cli.commands.options import Address, ApiKey, DbUrl, Namespace


def export(
    session_id: Annotated[str, typer.Argument(help="The session to export.")],
    address: Address = None,
    namespace: Namespace = None,
    api_key: ApiKey = None,
    db_url: DbUrl = None,
) -> None:
    """Print SESSION_ID as a bundle (JSON): transcript, workspace facts and audit, settings
    without secrets, decisions and who made them, usage. See docs/sessions-as-data.md."""
    import asyncio

    from durable_loop.cli.commands.session_data_access import with_session_data
    from durable_loop.worker.settings import WorkerSettings

    settings = WorkerSettings.load(
        temporal={"address": address, "namespace": namespace, "api_key": api_key},
        db_url=db_url,
    )
    bundle = asyncio.run(with_session_data(settings, lambda data: data.export(session_id)))
    typer.echo(bundle.model_dump_json(indent=1))
