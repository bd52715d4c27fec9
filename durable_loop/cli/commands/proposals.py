"""``durable-loop proposals | approve | reject``: a person decides on the model's proposals.

``approve`` binds the decision to the fingerprint of the content pending right now (or
to ``--fingerprint``, e.g. the one a UI showed) and sends it as an Update, so a stale,
unknown, expired or already decided proposal is refused before it enters history.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from durable_loop.cli.commands.options import Address, ApiKey, Namespace
from durable_loop.cli.commands.session_rpc import known_failure, temporal_client
from durable_loop.core.errors import ErrorCode

if TYPE_CHECKING:
    from durable_loop.core.proposals import DecisionResult, ProposalList, Verdict

Session = Annotated[str, typer.Argument(help="Session id (workflow id session-<ID>).")]
Proposal = Annotated[str, typer.Argument(help="Proposal id, as listed by `proposals`.")]
Approver = Annotated[
    str, typer.Option("--as", help="Who decides (recorded in the audit log).", show_default=False)
]
Comment = Annotated[
    str | None, typer.Option("--comment", help="Optional note; the model reads it.")
]
Fingerprint = Annotated[
    str | None,
    typer.Option("--fingerprint", help="Bind to this fingerprint instead of the pending one."),
]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def proposals(
    session_id: Session,
    as_json: AsJson = False,
    address: Address = None,
    namespace: Namespace = None,
    api_key: ApiKey = None,
) -> None:
    """List the proposals of session SESSION_ID that wait for a person, and recent decisions."""
    import asyncio

    listing = asyncio.run(
        _list(session_id, {"address": address, "namespace": namespace, "api_key": api_key})
    )
    if as_json:
        typer.echo(listing.model_dump_json(indent=2))
        return
    print_listing(listing)


def confirm(
    session_id: Session,
    proposal_id: Proposal,
    approver: Approver,
    comment: Comment = None,
    fingerprint: Fingerprint = None,
    as_json: AsJson = False,
    address: Address = None,
    namespace: Namespace = None,
    api_key: ApiKey = None,
) -> None:
    """Confirm PROPOSAL: the facts change is committed (once) and the model is told."""
    _decide(
        session_id,
        proposal_id,
        "confirm",
        approver,
        comment,
        fingerprint,
        as_json,
        {"address": address, "namespace": namespace, "api_key": api_key},
    )


def reject(
    session_id: Session,
    proposal_id: Proposal,
    approver: Approver,
    comment: Comment = None,
    fingerprint: Fingerprint = None,
    as_json: AsJson = False,
    address: Address = None,
    namespace: Namespace = None,
    api_key: ApiKey = None,
) -> None:
    """Reject PROPOSAL: facts stay unchanged; the model reads the rejection and comment."""
    _decide(
        session_id,
        proposal_id,
        "reject",
        approver,
        comment,
        fingerprint,
        as_json,
        {"address": address, "namespace": namespace, "api_key": api_key},
    )


def print_listing(listing: ProposalList) -> None:
    if not listing.pending:
        typer.echo("no pending proposals")
    for p in listing.pending:
        typer.echo(f"{p.proposal_id}  turn {p.turn}  expires {p.expires_at.isoformat()}")
        if p.summary:
            typer.echo(f"  summary: {p.summary}")
        typer.echo(f"  fingerprint: {p.fingerprint}")
        for op in p.changes:
            value = f" = {_short(op['value'])}" if "value" in op else ""
            source = f" from {op['from']}" if "from" in op else ""
            typer.echo(f"  {op['op']} {op['path']}{source}{value}")
    for d in listing.decided:
        note = f" ({d.error.code})" if d.error else ""
        typer.echo(f"{d.proposal_id}  {d.status}{note} by {d.decided_by}")


def _short(value: object, limit: int = 60) -> str:
    import json

    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _decide(
    session_id: str,
    proposal_id: str,
    verdict: Verdict,
    approver: str,
    comment: str | None,
    fingerprint: str | None,
    as_json: bool,
    temporal: dict[str, object],
) -> None:
    import asyncio

    result = asyncio.run(
        _send_decision(session_id, proposal_id, verdict, approver, comment, fingerprint, temporal)
    )
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
    else:
        version = f" (facts version {result.facts_version})" if result.facts_version else ""
        typer.echo(f"{result.proposal_id} {result.status}{version} by {result.decided_by}")
        if result.error is not None:
            typer.echo(f"  {result.error.code}: {result.error.message}", err=True)
    if result.status in {"conflict", "failed"}:
        raise typer.Exit(1)


async def _list(session_id: str, temporal: dict[str, object]) -> ProposalList:
    from durable_loop.client.proposals import ProposalClient

    approvals = ProposalClient(await temporal_client(temporal))
    try:
        return await approvals.proposals(session_id)
    except Exception as err:
        raise known_error(err, session_id) from None


async def _send_decision(
    session_id: str,
    proposal_id: str,
    verdict: Verdict,
    approver: str,
    comment: str | None,
    fingerprint: str | None,
    temporal: dict[str, object],
) -> DecisionResult:
    from durable_loop.client.proposals import ProposalClient
    from durable_loop.core.proposals import ProposalDecision

    approvals = ProposalClient(await temporal_client(temporal))
    try:
        if fingerprint is None and verdict == "confirm":
            decision = await approvals.decision_for(
                session_id, proposal_id, verdict, approver, comment
            )
        else:
            decision = ProposalDecision(
                proposal_id=proposal_id,
                verdict=verdict,
                approver=approver,
                fingerprint=fingerprint,
                comment=comment,
            )
        return await approvals.decide(session_id, decision)
    except Exception as err:
        raise known_error(err, session_id) from None


def known_error(
    err: Exception, session_id: str, *, refused: ErrorCode = ErrorCode.DECISION_REFUSED
) -> Exception:
    """Map refusals to CliError(code) (``refused`` when a refusal carries none); anything
    else passes through unchanged."""
    from durable_loop.cli.errors import CliError
    from durable_loop.client.proposals import ProposalNotPending
    from durable_loop.client.tool_approvals import ToolCallNotPending

    if isinstance(err, ProposalNotPending | ToolCallNotPending):
        return CliError(err.code, err.message)
    return known_failure(err, session_id, refused)
