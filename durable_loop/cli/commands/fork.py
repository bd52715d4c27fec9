"""``durable-loop fork SESSION --at TURN NEW_ID``: a new session from another's turns."""

from __future__ import annotations

from typing import Annotated

import typer

from durable_loop.cli.commands.options import Address, ApiKey, DbUrl, Namespace, TaskQueue


def fork(
    session_id: Annotated[str, typer.Argument(help="The session to fork.")],
    new_id: Annotated[str, typer.Argument(help="The new session's id.")],
    at: Annotated[
        int,
        typer.Option(
            "--at",
            help="The turn to fork at (as `trace` numbers them): it is kept, later ones not.",
        ),
    ],
    model: Annotated[
        str | None, typer.Option("--model", help="Another model for the fork.")
    ] = None,
    system: Annotated[
        str | None, typer.Option("--system", help="Another system prompt for the fork.")
    ] = None,
    address: Address = None,
    namespace: Namespace = None,
    api_key: ApiKey = None,
    db_url: DbUrl = None,
    task_queue: TaskQueue = None,
) -> None:
    """Start NEW_ID from SESSION_ID's transcript up to turn --at; nothing is run again.

    Committed facts and decided proposals before that turn are carried; calls or proposals
    still waiting for a person are not. SESSION_ID is left as it is."""
    import asyncio

    from durable_loop.cli.commands.session_data_access import with_session_data
    from durable_loop.worker.settings import WorkerSettings

    settings = WorkerSettings.load(
        temporal={"address": address, "namespace": namespace, "api_key": api_key},
        db_url=db_url,
        task_queue=task_queue,
    )
    done = asyncio.run(
        with_session_data(
            settings,
            lambda data: data.fork(session_id, at, new_id, model=model, system_prompt=system),
        )
    )
    typer.echo(
        f"session {done.session_id} forked from {done.forked_from}: {done.rows_copied} "
        f"messages copied; send to it with `durable-loop send {done.session_id} TEXT`"
    )
