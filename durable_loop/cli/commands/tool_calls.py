"""``durable-loop tool-calls list | confirm | edit | reject`` and ``durable-loop result``:
a person decides on the tool calls held for approval, and a caller waits for a message.

A decision is bound to the fingerprint of the call pending right now (or to
``--fingerprint``, the one a UI showed) and sent as an Update, so an unknown, expired,
already decided or mismatched decision, and edited arguments that break the tool's schema
or size limit, are refused before they enter history.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from durable_loop.cli.commands.options import Address, ApiKey, Namespace
from durable_loop.cli.commands.proposals import (
    Approver,
    AsJson,
    Comment,
    Fingerprint,
    Session,
    known_error,
)
from durable_loop.cli.commands.session_rpc import temporal_client

if TYPE_CHECKING:
    from pydantic import JsonValue

    from durable_loop.client.tool_approvals import ToolApprovalClient
    from durable_loop.core.approvals import ToolApprovalList, ToolCallDecided
    from durable_loop.core.contracts import RunResult
    from durable_loop.core.proposals import Verdict

T = TypeVar("T")
app = typer.Typer(help="Tool calls held for a person's approval.", no_args_is_help=True)

Call = Annotated[str, typer.Argument(help="Tool call id, as listed by `tool-calls list`.")]
Arguments = Annotated[
    str, typer.Option("--args", help="The arguments the call runs with, as a JSON object.")
]


@app.command("list")
def list_calls(
    session_id: Session,
    as_json: AsJson = False,
    address: Address = None,
    namespace: Namespace = None,
    api_key: ApiKey = None,
) -> None:
    """List the tool calls of session SESSION_ID that wait for a person, recent decisions
    and refused decisions."""
    import asyncio

    temporal: dict[str, object] = {"address": address, "namespace": namespace, "api_key": api_key}
    listing = asyncio.run(_list(session_id, temporal))
    if as_json:
        typer.echo(listing.model_dump_json(indent=2))
        return
    print_listing(listing)


@app.command("confirm")
def confirm(
    session_id: Session,
    call_id: Call,
    approver: Approver,
    comment: Comment = None,
    fingerprint: Fingerprint = None,
    as_json: AsJson = False,
    address: Address = None,
    namespace: Namespace = None,
    api_key: ApiKey = None,
) -> None:
    """Confirm CALL_ID: it runs once with the arguments the model gave."""
    temporal: dict[str, object] = {"address": address, "namespace": namespace, "api_key": api_key}
    _decide(session_id, call_id, "confirm", approver, comment, fingerprint, None, as_json, temporal)


app.command("approve", hidden=True, help="Another spelling of `confirm`.")(confirm)


@app.command("edit")
def edit(
    session_id: Session,
    call_id: Call,
    approver: Approver,
    arguments: Arguments,
    comment: Comment = None,
    fingerprint: Fingerprint = None,
    as_json: AsJson = False,
    address: Address = None,
    namespace: Namespace = None,
    api_key: ApiKey = None,
) -> None:
    """Confirm CALL_ID with edited arguments (checked against the tool's schema); the model
    reads which fields a person changed."""
    from durable_loop.cli.errors import CliError
    from durable_loop.core.errors import ErrorCode

    try:
        edited = json.loads(arguments)
    except ValueError as err:
        raise CliError(ErrorCode.INVALID_JSON, f"--args is not JSON: {err}") from None
    if not isinstance(edited, dict):
        raise CliError(ErrorCode.INVALID_JSON, "--args must be a JSON object")
    temporal: dict[str, object] = {"address": address, "namespace": namespace, "api_key": api_key}
    _decide(
        session_id, call_id, "confirm", approver, comment, fingerprint, edited, as_json, temporal
    )


@app.command("reject")
def reject(
    session_id: Session,
    call_id: Call,
    approver: Approver,
    comment: Comment = None,
    fingerprint: Fingerprint = None,
    as_json: AsJson = False,
    address: Address = None,
    namespace: Namespace = None,
    api_key: ApiKey = None,
) -> None:
    """Reject CALL_ID: it does not run; the model reads TOOL_CALL_REJECTED and the comment."""
    temporal: dict[str, object] = {"address": address, "namespace": namespace, "api_key": api_key}
    _decide(session_id, call_id, "reject", approver, comment, fingerprint, None, as_json, temporal)


def result(
    session_id: Session,
    message_id: Annotated[str, typer.Argument(help="The message id the reply was sent under.")],
    address: Address = None,
    namespace: Namespace = None,
    api_key: ApiKey = None,
) -> None:
    """Wait for the final result of message MESSAGE_ID (after its held calls are decided)."""
    import asyncio

    temporal: dict[str, object] = {"address": address, "namespace": namespace, "api_key": api_key}
    typer.echo(asyncio.run(_result(session_id, message_id, temporal)).model_dump_json(indent=2))


def print_listing(listing: ToolApprovalList) -> None:
    if not listing.pending:
        typer.echo("no tool calls wait for approval")
    for p in listing.pending:
        typer.echo(f"{p.call_id}  {p.tool}  turn {p.turn}  expires {p.expires_at.isoformat()}")
        typer.echo(f"  fingerprint: {p.fingerprint}")
        for line in json.dumps(p.arguments, indent=2, ensure_ascii=False).splitlines():
            typer.echo(f"  {line}")
    for d in listing.decided:
        edited = f" (edited: {', '.join(d.edited_fields)})" if d.edited_fields else ""
        typer.echo(f"{d.call_id}  {d.tool}  {d.status}{edited} by {d.decided_by}")
    for r in listing.refused:
        typer.echo(f"{r.id}  refused {r.error.code} from {r.approver}: {r.error.message}")


def _decide(
    session_id: str,
    call_id: str,
    verdict: Verdict,
    approver: str,
    comment: str | None,
    fingerprint: str | None,
    arguments: dict[str, JsonValue] | None,
    as_json: bool,
    temporal: dict[str, object],
) -> None:
    import asyncio

    decided = asyncio.run(
        _send(session_id, call_id, verdict, approver, comment, fingerprint, arguments, temporal)
    )
    if as_json:
        typer.echo(decided.model_dump_json(indent=2))
        return
    edited = f" (edited: {', '.join(decided.edited_fields)})" if decided.edited_fields else ""
    typer.echo(f"{decided.call_id} {decided.status}{edited} by {decided.decided_by}")


async def _list(session_id: str, temporal: dict[str, object]) -> ToolApprovalList:
    return await with_calls(session_id, temporal, lambda calls: calls.listing(session_id))


async def _send(
    session_id: str,
    call_id: str,
    verdict: Verdict,
    approver: str,
    comment: str | None,
    fingerprint: str | None,
    arguments: dict[str, JsonValue] | None,
    temporal: dict[str, object],
) -> ToolCallDecided:
    async def send(calls: ToolApprovalClient) -> ToolCallDecided:
        decision = await calls.decision_for(
            session_id,
            call_id,
            verdict,
            approver,
            comment=comment,
            arguments=arguments,
            fingerprint=fingerprint,
        )
        return await calls.decide(session_id, decision)

    return await with_calls(session_id, temporal, send)


async def _result(session_id: str, message_id: str, temporal: dict[str, object]) -> RunResult:
    return await with_calls(
        session_id, temporal, lambda calls: calls.message_result(session_id, message_id)
    )


async def with_calls(
    session_id: str,
    temporal: dict[str, object],
    work: Callable[[ToolApprovalClient], Awaitable[T]],
) -> T:
    """Run ``work`` on a connected client; refusals become coded CLI errors."""
    from durable_loop.client.tool_approvals import ToolApprovalClient

    calls = ToolApprovalClient(await temporal_client(temporal))
    try:
        return await work(calls)
    except Exception as err:
        raise known_error(err, session_id) from None
