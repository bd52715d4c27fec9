"""``durable-loop cancel SESSION [MESSAGE]``: stop the running message (or a queued one).

The session answers once the message has ended: its in-flight LLM request is aborted,
running tools are cancelled, every started call gets a result, and the message's
RunResult (status ``cancelled``) is printed. Queued messages after it still run. A cancel
the session refuses (idle, unknown or finished message, twice) exits with its code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from durable_loop.cli.commands.options import Address, ApiKey, Namespace
from durable_loop.cli.commands.proposals import AsJson, Session, known_error
from durable_loop.core.errors import ErrorCode

if TYPE_CHECKING:
    from durable_loop.core.contracts import RunResult


def cancel(
    session_id: Session,
    message_id: Annotated[
        str | None,
        typer.Argument(help="Message id (running or queued); default: the running message."),
    ] = None,
    reason: Annotated[
        str, typer.Option("--reason", help="Why; the model reads it on the next message.")
    ] = "cancelled",
    as_json: AsJson = False,
    address: Address = None,
    namespace: Namespace = None,
    api_key: ApiKey = None,
) -> None:
    """Cancel the running message of SESSION_ID (or MESSAGE_ID) and print its result."""
    import asyncio

    from durable_loop.cli.commands.send import summary_lines

    temporal: dict[str, object] = {"address": address, "namespace": namespace, "api_key": api_key}
    result = asyncio.run(_cancel(session_id, message_id, reason, temporal))
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
        return
    for line in summary_lines(result):
        typer.echo(line)


async def _cancel(
    session_id: str, message_id: str | None, reason: str, temporal: dict[str, object]
) -> RunResult:
    from durable_loop.cli.commands.proposals import temporal_client
    from durable_loop.client.sessions import SessionClient

    sessions = SessionClient(await temporal_client(temporal), search_attributes=False)
    try:
        return await sessions.cancel(session_id, message_id, reason=reason)
    except Exception as err:
        raise known_error(err, session_id, refused=ErrorCode.UPDATE_REFUSED) from None
