"""``durable-loop tool-calls list | approve | edit | reject | answer | withdraw``: the
tool calls a session holds for a person: for approval, or in doubt (an ``effect="once"``
call whose attempt stopped inside the tool; ``answer`` settles it). (``durable-loop approve
| reject`` decide a held call or a proposal alike; these name tool calls only, ``edit``
approves with other arguments, ``withdraw`` ends a standing approval.) Decisions go through
:func:`durable_loop.cli.commands.decide.decide`.

A decision is bound to the fingerprint of the call pending right now (or to
``--fingerprint``, the one a UI showed) and sent as an Update, so an unknown, expired,
already decided or mismatched decision, and edited arguments that break the tool's schema
or size limit, are refused before they enter history.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from durable_loop.cli.commands.decide import decide, parse_arguments, remembered
from durable_loop.cli.commands.decision_options import (
    Answer,
    Approver,
    Arguments,
    AsJson,
    Call,
    Comment,
    Fingerprint,
    RememberFor,
    RememberOn,
    RememberWhen,
    Result,
    Session,
)
from durable_loop.cli.commands.options import Address, ApiKey, Namespace, temporal_flags
from durable_loop.cli.commands.session_rpc import known_error, temporal_client
from durable_loop.cli.lazy import WholeHelpGroup

if TYPE_CHECKING:
    from pydantic import JsonValue

    from durable_loop.client.tool_approvals import ToolApprovalClient
    from durable_loop.core.approval_models import (
        InDoubtAnswer,
        Remember,
        ToolApprovalList,
        ToolPolicy,
    )
    from durable_loop.core.proposals import ProposalList, Verdict

T = TypeVar("T")
app = typer.Typer(
    cls=WholeHelpGroup, help="Tool calls held for a person's approval.", no_args_is_help=True
)


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

    temporal = temporal_flags(address, namespace, api_key)
    listing, proposals = asyncio.run(_list(session_id, temporal))
    if as_json:
        typer.echo(listing.model_dump_json(indent=2))
        return
    print_listing(listing, session_id, proposals)


@app.command("approve")
def approve(
    session_id: Session,
    call_id: Call,
    approver: Approver,
    comment: Comment = None,
    fingerprint: Fingerprint = None,
    remember: RememberOn = False,
    remember_for: RememberFor = None,
    remember_when: RememberWhen = None,
    as_json: AsJson = False,
    address: Address = None,
    namespace: Namespace = None,
    api_key: ApiKey = None,
) -> None:
    """Approve CALL_ID: it runs once with the arguments the model gave."""
    temporal = temporal_flags(address, namespace, api_key)
    kept = remembered(remember, remember_for, remember_when)
    decide_call(
        session_id,
        call_id,
        "confirm",
        approver,
        comment,
        fingerprint,
        as_json,
        temporal,
        remember=kept,
    )


app.command("confirm", hidden=True, help="Another spelling of `approve`.")(approve)


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
    """Approve CALL_ID with edited arguments (checked against the tool's schema); the
    model reads which fields a person changed."""
    temporal = temporal_flags(address, namespace, api_key)
    edited = parse_arguments(arguments)
    decide_call(
        session_id,
        call_id,
        "confirm",
        approver,
        comment,
        fingerprint,
        as_json,
        temporal,
        arguments=edited,
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
    temporal = temporal_flags(address, namespace, api_key)
    decide_call(session_id, call_id, "reject", approver, comment, fingerprint, as_json, temporal)


@app.command("answer")
def answer(
    session_id: Session,
    call_id: Call,
    verdict: Answer,
    approver: Approver,
    result: Result = None,
    comment: Comment = None,
    fingerprint: Fingerprint = None,
    as_json: AsJson = False,
    address: Address = None,
    namespace: Namespace = None,
    api_key: ApiKey = None,
) -> None:
    """Settle CALL_ID, a call in doubt (an attempt stopped inside a tool that must not run
    twice blindly): happened, run_again or give_up."""
    from durable_loop.cli.errors import CliError
    from durable_loop.core.approval_models import IN_DOUBT_ANSWERS
    from durable_loop.core.errors import ErrorCode

    temporal = temporal_flags(address, namespace, api_key)
    typed = verdict.strip().lower().replace("-", "_")
    word = next((a for a in IN_DOUBT_ANSWERS if a == typed), None)
    if word is None:
        raise CliError(
            ErrorCode.INVALID_DECISION,
            f"answer {', '.join(IN_DOUBT_ANSWERS)}; not {verdict!r}",
        )
    decide_call(
        session_id, call_id, word, approver, comment, fingerprint, as_json, temporal, result=result
    )


@app.command("withdraw")
def withdraw(
    session_id: Session,
    call_id: Annotated[
        str,
        typer.Argument(help="The call whose approval set the standing approval (`list` shows it)."),
    ],
    approver: Approver,
    comment: Comment = None,
    as_json: AsJson = False,
    address: Address = None,
    namespace: Namespace = None,
    api_key: ApiKey = None,
) -> None:
    """Withdraw the standing approval set when CALL_ID was approved with --remember: later
    calls of its tool wait for a person again (audited)."""
    import asyncio

    from durable_loop.core.visible_text import visible

    temporal = temporal_flags(address, namespace, api_key)

    async def send(calls: ToolApprovalClient) -> ToolPolicy:
        return await calls.withdraw_policy(session_id, call_id, approver, comment=comment)

    policy = asyncio.run(with_calls(session_id, temporal, send))
    if as_json:
        typer.echo(policy.model_dump_json(indent=2))
        return
    typer.echo(
        visible(f"standing approval of {policy.tool} (set on {policy.call_id}) withdrawn by ")
        + visible(approver.strip())
    )


def decide_call(
    session_id: str,
    call_id: str,
    verdict: Verdict | InDoubtAnswer,
    approver: str,
    comment: str | None,
    fingerprint: str | None,
    as_json: bool,
    temporal: dict[str, object],
    *,
    arguments: dict[str, JsonValue] | None = None,
    remember: Remember | None = None,
    result: str | None = None,
) -> None:
    """:func:`decide` on a held tool call (proposals are not read)."""
    decide(
        session_id,
        call_id,
        verdict,
        approver,
        comment,
        fingerprint,
        arguments,
        as_json,
        temporal,
        remember=remember,
        calls_only=True,
        result=result,
    )


def print_listing(
    listing: ToolApprovalList, session_id: str, proposals: ProposalList | None = None
) -> None:
    from durable_loop.cli.commands.people_view import call_decided_line, pointer_to_proposals
    from durable_loop.core.visible_text import visible, visible_json

    if not listing.pending:
        waiting = proposals.pending if proposals is not None else []
        none = "no tool calls wait for approval"
        typer.echo(pointer_to_proposals(session_id, waiting) if waiting else none)
    for p in listing.pending:
        where = "" if p.session_id == session_id else f"  in sub-agent {visible(p.session_id)}"
        typer.echo(
            f"{visible(p.call_id)}  {visible(p.shown_tool)}  turn {p.turn}  "
            f"expires {p.expires_at.isoformat()}{where}"
        )
        typer.echo(f"  fingerprint: {p.fingerprint}")
        if p.kind == "in_doubt":
            typer.echo(f"  in doubt: {visible(p.doubt or '')}")
            typer.echo("  answer: happened (--result TEXT), run_again or give_up")
        # escapes, not raw characters: a value's CR/LF or U+202E cannot fake a line or a field
        for line in visible_json(p.arguments, indent=2).split("\n"):
            typer.echo(f"  {line}")
    for policy in listing.policies:
        until = f" until {policy.expires_at.isoformat()}" if policy.expires_at else ""
        when = " when the arguments match a condition" if policy.condition else ""
        typer.echo(
            visible(
                f"standing approval: {policy.tool} by {policy.approved_by}{until}{when} "
                f"(set on {policy.call_id}; `tool-calls withdraw` ends it)"
            )
        )
    for d in listing.decided:
        typer.echo(call_decided_line(d, with_tool=True))
    for r in listing.refused:
        refused = f"{r.id}  refused {r.error.code} from {r.approver}: {r.error.message}"
        typer.echo(visible(refused))


async def _list(
    session_id: str, temporal: dict[str, object]
) -> tuple[ToolApprovalList, ProposalList | None]:
    """The held calls, and when none is held the proposals (so that "no tool calls" can
    say what does wait)."""
    from durable_loop.client.proposals import ProposalClient

    async def both(calls: ToolApprovalClient) -> tuple[ToolApprovalList, ProposalList | None]:
        listing = await calls.listing(session_id)
        if listing.pending:
            return listing, None
        return listing, await ProposalClient(calls.client).proposals(session_id)

    return await with_calls(session_id, temporal, both)


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
