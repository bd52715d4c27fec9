"""``durable-loop sessions``: the sessions the visibility store knows, newest first."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated

import typer

from durable_loop.cli.commands.options import Address, ApiKey, Namespace

if TYPE_CHECKING:
    from durable_loop.client.session_list import SessionListing


def sessions(
    running: Annotated[bool, typer.Option("--running", help="Running sessions only.")] = False,
    limit: Annotated[int, typer.Option("--limit", help="At most this many.", min=1)] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    address: Address = None,
    namespace: Namespace = None,
    api_key: ApiKey = None,
) -> None:
    """List sessions, newest first: id, status, last activity, decisions waiting for a
    person, model. Needs a server with visibility (`durable-loop server`, a cluster);
    status, waiting and model come from the session's search attributes."""
    import asyncio

    temporal: dict[str, object] = {"address": address, "namespace": namespace, "api_key": api_key}
    listing = asyncio.run(_load(limit, running, temporal))
    if as_json:
        typer.echo(listing.model_dump_json(indent=2))
        return
    for line in table_lines(listing, datetime.now(UTC)):
        typer.echo(line)


def table_lines(listing: SessionListing, now: datetime) -> list[str]:
    if not listing.sessions:
        return ["no sessions"]
    rows = [
        (
            s.session_id,
            s.status,
            ago(s.last_activity, now),
            "-" if s.waiting is None else str(s.waiting),
            s.model or "-",
        )
        for s in listing.sessions
    ]
    head = ("SESSION", "STATUS", "LAST ACTIVITY", "WAITING", "MODEL")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(4)]
    return [
        "  ".join(f"{cell:<{widths[i]}}" for i, cell in enumerate(r[:4])) + f"  {r[4]}"
        for r in [head, *rows]
    ]


def ago(when: datetime | None, now: datetime) -> str:
    """``12s ago``, ``5m ago``, ``3h ago``, ``2d ago``."""
    if when is None:
        return "-"
    seconds = max(int((now - when).total_seconds()), 0)
    for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return f"{seconds}s ago"


async def _load(limit: int, running: bool, temporal: dict[str, object]) -> SessionListing:
    from durable_loop.cli.commands.session_rpc import temporal_client
    from durable_loop.cli.errors import CliError
    from durable_loop.client.session_list import list_sessions
    from durable_loop.client.waiting import VisibilityUnavailable

    client = await temporal_client(temporal)
    try:
        return await list_sessions(client, limit=limit, running_only=running)
    except VisibilityUnavailable as err:
        raise CliError(err.code, err.message) from None
