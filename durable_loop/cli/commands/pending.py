"""``durable-loop pending [SESSION]``: everything that waits for a person, held tool calls
(for approval, or in doubt) and proposals alike, of one session or of every running
session."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from durable_loop.cli.commands.options import Address, ApiKey, Namespace

if TYPE_CHECKING:
    from durable_loop.client.waiting import WaitingList


def pending(
    session_id: Annotated[
        str | None,
        typer.Argument(help="Session id; default: every running session (from visibility)."),
    ] = None,
    limit: Annotated[
        int, typer.Option("--limit", help="At most this many sessions are asked.", min=1)
    ] = 100,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    address: Address = None,
    namespace: Namespace = None,
    api_key: ApiKey = None,
) -> None:
    """List what waits for a person: the tool calls held for approval and the proposals of
    SESSION_ID, or of every running session. Each line starts with the id that
    `approve` and `reject` take."""
    import asyncio

    temporal: dict[str, object] = {"address": address, "namespace": namespace, "api_key": api_key}
    listing = asyncio.run(_load(session_id, limit, temporal))
    if as_json:
        typer.echo(listing.model_dump_json(indent=2))
        return
    for line in listing_lines(listing, session_id):
        typer.echo(line)


def listing_lines(listing: WaitingList, session_id: str | None) -> list[str]:
    from durable_loop.cli.commands.people_view import decide_hint, waiting_lines
    from durable_loop.core.visible_text import visible

    if not listing.count:
        where = f" in session {visible(session_id)}" if session_id else " in any running session"
        return [f"nothing waits for a person{where}"]
    lines: list[str] = []
    for waiting in listing.sessions:
        lines.append(f"{visible(waiting.session_id)}: {waiting.count} waiting")
        lines += waiting_lines(waiting)
    lines.append(decide_hint(session_id or "SESSION"))
    if any(c.kind == "in_doubt" for w in listing.sessions for c in w.tool_calls):
        lines.append(ANSWER_HINT.format(session=visible(session_id or "SESSION")))
    return lines


ANSWER_HINT = (
    "in doubt: durable-loop tool-calls answer {session} ID happened|run_again|give_up --as YOU "
    "(--result for what the model reads)"
)


async def _load(session_id: str | None, limit: int, temporal: dict[str, object]) -> WaitingList:
    from durable_loop.cli.commands.session_rpc import known_failure, temporal_client
    from durable_loop.cli.errors import CliError
    from durable_loop.client.waiting import (
        VisibilityUnavailable,
        WaitingList,
        waiting_everywhere,
        waiting_in,
    )
    from durable_loop.core.errors import ErrorCode

    client = await temporal_client(temporal)
    try:
        if session_id is None:
            return await waiting_everywhere(client, limit=limit)
        return WaitingList(sessions=[await waiting_in(client, session_id)])
    except VisibilityUnavailable as err:
        raise CliError(err.code, f"{err.message} (durable-loop pending SESSION)") from None
    except Exception as err:
        raise known_failure(err, session_id or "", ErrorCode.QUERY_FAILED) from None
