"""``durable-loop import BUNDLE NEW_ID``: recreate an exported session as a new one."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from durable_loop.cli.commands.options import Address, ApiKey, DbUrl, Namespace, TaskQueue


def import_session(
    bundle_path: Annotated[Path, typer.Argument(help="A bundle `durable-loop export` wrote.")],
    new_id: Annotated[str, typer.Argument(help="The new session's id.")],
    address: Address = None,
    namespace: Namespace = None,
    api_key: ApiKey = None,
    db_url: DbUrl = None,
    task_queue: TaskQueue = None,
) -> None:
    """Write the bundle's transcript and workspace to this store and start NEW_ID where the
    bundle ended, on this server. A bundle of a newer format is refused."""
    import asyncio

    from durable_loop.cli.commands.session_data_access import with_session_data
    from durable_loop.cli.errors import CliError
    from durable_loop.client.session_data.bundle import read_bundle
    from durable_loop.core.errors import DurableLoopError
    from durable_loop.worker.settings import WorkerSettings

    try:
        bundle = read_bundle(bundle_path.read_bytes())
    except DurableLoopError as err:
        raise CliError(err.code, err.message) from None
    settings = WorkerSettings.load(
        temporal={"address": address, "namespace": namespace, "api_key": api_key},
        db_url=db_url,
        task_queue=task_queue,
    )
    asyncio.run(
        with_session_data(
            settings, lambda data: data.import_bundle(bundle, new_id), create_store=True
        )
    )
    typer.echo(
        f"session {new_id} imported from {bundle.session_id}: {len(bundle.rows)} messages, "
        f"{bundle.turns} turns"
    )
