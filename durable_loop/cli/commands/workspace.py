"""``durable-loop workspace``: a session's facts, draft, locks, version, decisions and
newest audit rows, read from the store."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from durable_loop.cli.commands.options import Address, ApiKey, DbUrl, Namespace

if TYPE_CHECKING:
    from durable_loop.client.workspace import WorkspaceView
    from durable_loop.worker.settings import WorkerSettings


def workspace(
    session_id: Annotated[str, typer.Argument(help="Session id (workflow id session-<ID>).")],
    workspace_id: Annotated[
        str | None,
        typer.Option(
            "--workspace-id",
            help="Read this workspace without asking Temporal for the session's.",
            show_default=False,
        ),
    ] = None,
    audit: Annotated[
        int, typer.Option("--audit", min=0, help="How many of the newest audit rows to show.")
    ] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print the workspace as JSON.")] = False,
    address: Address = None,
    namespace: Namespace = None,
    api_key: ApiKey = None,
    db_url: DbUrl = None,
) -> None:
    """Show the workspace of session SESSION_ID: committed facts, draft, locks, version,
    the decisions people made (who approved which tool call or proposal, on which
    arguments) and the newest audit rows."""
    import asyncio

    from durable_loop.worker.settings import WorkerSettings

    settings = WorkerSettings.load(
        temporal={"address": address, "namespace": namespace, "api_key": api_key},
        db_url=db_url,
    )
    view = asyncio.run(_load(session_id, workspace_id, audit, settings))
    if as_json:
        typer.echo(view.model_dump_json(indent=2))
        return
    from durable_loop.client.workspace_render import print_workspace

    print_workspace(view)


async def _load(
    session_id: str, workspace_id: str | None, audit: int, settings: WorkerSettings
) -> WorkspaceView:
    from durable_loop.cli.errors import reading_session
    from durable_loop.client.connect import connect
    from durable_loop.client.workspace import load_workspace, session_workspace_id

    with reading_session(session_id, settings.temporal.namespace):
        if workspace_id is None:
            client = await connect(settings.temporal)
            workspace_id = await session_workspace_id(client, session_id)
        return await load_workspace(
            settings.db_url, workspace_id, session_id=session_id, audit_rows=audit
        )
