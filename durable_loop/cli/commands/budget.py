"""``durable-loop budget``: show or change a running session's budget (the ``set_budget``
Update). A change names who makes it (``--as``, recorded in the audit log) and applies
from the session's next message on."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from durable_loop.cli.commands.options import Address, ApiKey, Namespace
from durable_loop.cli.commands.session_rpc import known_failure, temporal_client
from durable_loop.core.errors import ErrorCode

if TYPE_CHECKING:
    from durable_loop.core.budget import BudgetChange, SessionBudget

Session = Annotated[str, typer.Argument(help="Session id (workflow id session-<ID>).")]
MaxSessionTokens = Annotated[
    int | None,
    typer.Option("--max-session-tokens", min=1, help="New token budget of the session."),
]
Unlimited = Annotated[bool, typer.Option("--unlimited", help="Remove the token limit.")]
MaxTurns = Annotated[
    int | None, typer.Option("--max-turns", min=1, help="New limit of LLM turns per message.")
]
ChangedBy = Annotated[
    str | None,
    typer.Option(
        "--as", help="Who changes the budget (recorded in the audit log).", show_default=False
    ),
]
Comment = Annotated[str | None, typer.Option("--comment", help="Why (recorded in the audit log).")]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def budget(
    session_id: Session,
    max_session_tokens: MaxSessionTokens = None,
    unlimited: Unlimited = False,
    max_turns: MaxTurns = None,
    changed_by: ChangedBy = None,
    comment: Comment = None,
    as_json: AsJson = False,
    address: Address = None,
    namespace: Namespace = None,
    api_key: ApiKey = None,
) -> None:
    """Show the budget of session SESSION_ID, or change it from its next message on."""
    import asyncio

    from durable_loop.cli.errors import CliError
    from durable_loop.core.budget import BudgetChange

    temporal: dict[str, object] = {"address": address, "namespace": namespace, "api_key": api_key}
    if max_session_tokens is None and not unlimited and max_turns is None:
        asyncio.run(_show(session_id, as_json, temporal))
        return
    if changed_by is None:
        raise CliError(ErrorCode.INVALID_SETTING, "say who changes the budget with --as")
    change = BudgetChange(
        changed_by=changed_by,
        max_session_tokens=max_session_tokens,
        unlimited_tokens=unlimited,
        max_turns=max_turns,
        comment=comment,
    )
    asyncio.run(_change(session_id, change, as_json, temporal))


def describe(budget: SessionBudget) -> str:
    tokens = "unlimited" if budget.max_session_tokens is None else budget.max_session_tokens
    return f"max_session_tokens {tokens}, max_turns {budget.max_turns}"


async def _show(session_id: str, as_json: bool, temporal: dict[str, object]) -> None:
    from durable_loop.client.sessions import SessionClient

    sessions = SessionClient(await temporal_client(temporal))
    try:
        status = await sessions.status(session_id)
    except Exception as err:
        raise known_failure(err, session_id, ErrorCode.QUERY_FAILED) from None
    if as_json:
        typer.echo(status.budget.model_dump_json(indent=2) if status.budget else "null")
        return
    used = f"used {status.usage.total_tokens} tokens"
    typer.echo(f"{describe(status.budget)}; {used}" if status.budget else used)


async def _change(
    session_id: str, change: BudgetChange, as_json: bool, temporal: dict[str, object]
) -> None:
    from durable_loop.client.sessions import SessionClient

    sessions = SessionClient(await temporal_client(temporal))
    try:
        result = await sessions.set_budget(session_id, change)
    except Exception as err:
        raise known_failure(err, session_id, ErrorCode.UPDATE_REFUSED) from None
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
        return
    typer.echo(f"budget of {session_id} set by {result.changed_by}: {describe(result.budget)}")
    typer.echo(f"  was {describe(result.previous)}; used {result.used_tokens} tokens", err=True)
