"""``durable-loop proposals``: the model's proposals that wait for a person, and recent
decisions. Deciding is ``durable-loop approve | reject`` (:mod:`.decide`), the same verbs
as for held tool calls; helpers the session commands share live here too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from durable_loop.cli.commands.decide import AsJson, Session
from durable_loop.cli.commands.options import Address, ApiKey, Namespace
from durable_loop.cli.commands.session_rpc import known_error, temporal_client

if TYPE_CHECKING:
    from durable_loop.core.approval_models import ToolApprovalList
    from durable_loop.core.proposals import ProposalList

__all__ = ["AsJson", "Session", "known_error", "proposals", "temporal_client"]


def proposals(
    session_id: Session,
    as_json: AsJson = False,
    address: Address = None,
    namespace: Namespace = None,
    api_key: ApiKey = None,
) -> None:
    """List the proposals of session SESSION_ID that wait for a person, and recent
    decisions. Decide with `durable-loop approve` or `reject`."""
    import asyncio

    listing, calls = asyncio.run(
        _list(session_id, {"address": address, "namespace": namespace, "api_key": api_key})
    )
    if as_json:
        typer.echo(listing.model_dump_json(indent=2))
        return
    print_listing(listing, session_id, calls)


def print_listing(
    listing: ProposalList, session_id: str, calls: ToolApprovalList | None = None
) -> None:
    from durable_loop.cli.commands.people_view import pointer_to_calls, proposal_decided_line
    from durable_loop.core.visible_text import visible

    if not listing.pending:
        held = calls.pending if calls is not None else []
        typer.echo(pointer_to_calls(session_id, held) if held else "no pending proposals")
    for p in listing.pending:
        typer.echo(f"{visible(p.proposal_id)}  turn {p.turn}  expires {p.expires_at.isoformat()}")
        if p.summary:
            typer.echo(f"  summary: {visible(p.summary)}")
        typer.echo(f"  fingerprint: {p.fingerprint}")
        for op in p.changes:
            value = f" = {_short(op['value'])}" if "value" in op else ""
            source = f" from {op['from']}" if "from" in op else ""
            typer.echo(visible(f"  {op['op']} {op['path']}{source}{value}"))
    for d in listing.decided:
        note = f" ({d.error.code})" if d.error else ""
        typer.echo(f"{proposal_decided_line(d)}{note}")


def _short(value: object, limit: int = 60) -> str:
    from durable_loop.cli.commands.people_view import short
    from durable_loop.core.visible_text import visible_json

    return short(visible_json(value), limit)


async def _list(
    session_id: str, temporal: dict[str, object]
) -> tuple[ProposalList, ToolApprovalList | None]:
    """The proposals, and when none is pending the held calls (so that "no pending
    proposals" can say what does wait)."""
    from durable_loop.client.proposals import ProposalClient
    from durable_loop.client.tool_approvals import ToolApprovalClient

    client = await temporal_client(temporal)
    try:
        listing = await ProposalClient(client).proposals(session_id)
        if listing.pending:
            return listing, None
        return listing, await ToolApprovalClient(client).listing(session_id)
    except Exception as err:
        raise known_error(err, session_id) from None
