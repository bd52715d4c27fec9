"""``durable-loop approve | reject SESSION ID``: a person decides on whatever ID names in
the session, a tool call held for approval or a proposal.

Both listings are read at once; the decision is bound to the fingerprint of what is
pending right now (or to ``--fingerprint``, the one a UI showed) and sent as an Update, so
a stale, unknown, expired or already decided decision is refused with its code (and
audited). ``approve --remember`` keeps a standing approval of the tool. ``tool-calls
approve | edit | reject | answer`` send through :func:`decide` too, naming tool calls only.
An ID the session never had gets NOT_PENDING and the list of what does wait; one already
decided gets ALREADY_DECIDED and how it was decided.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from durable_loop.cli.commands.decision_options import (
    Approver,
    AsJson,
    Comment,
    EditedArguments,
    Fingerprint,
    RememberFor,
    RememberOn,
    RememberWhen,
    Session,
    Target,
)
from durable_loop.cli.commands.options import Address, ApiKey, Namespace, temporal_flags

if TYPE_CHECKING:
    from typing import NoReturn

    from pydantic import JsonValue

    from durable_loop.client.proposals import ProposalClient
    from durable_loop.client.tool_approvals import ToolApprovalClient
    from durable_loop.core.approval_models import (
        InDoubtAnswer,
        Remember,
        ToolApprovalList,
        ToolCallDecided,
    )
    from durable_loop.core.proposals import (
        DecisionResult,
        ProposalDecision,
        ProposalList,
        Verdict,
    )


def approve(
    session_id: Session,
    target_id: Target,
    approver: Approver,
    comment: Comment = None,
    arguments: EditedArguments = None,
    fingerprint: Fingerprint = None,
    remember: RememberOn = False,
    remember_for: RememberFor = None,
    remember_when: RememberWhen = None,
    as_json: AsJson = False,
    address: Address = None,
    namespace: Namespace = None,
    api_key: ApiKey = None,
) -> None:
    """Approve TARGET_ID in session SESSION_ID: a held tool call runs (once), a proposal's
    facts change is committed (once); the model is told."""
    edited = parse_arguments(arguments)
    kept = remembered(remember, remember_for, remember_when)
    temporal = temporal_flags(address, namespace, api_key)
    decide(
        session_id,
        target_id,
        "confirm",
        approver,
        comment,
        fingerprint,
        edited,
        as_json,
        temporal,
        remember=kept,
    )


def reject(
    session_id: Session,
    target_id: Target,
    approver: Approver,
    comment: Comment = None,
    fingerprint: Fingerprint = None,
    as_json: AsJson = False,
    address: Address = None,
    namespace: Namespace = None,
    api_key: ApiKey = None,
) -> None:
    """Reject TARGET_ID in session SESSION_ID: a held tool call does not run (the model
    reads TOOL_CALL_REJECTED), a proposal leaves the facts unchanged; the model reads the
    comment."""
    temporal = temporal_flags(address, namespace, api_key)
    decide(session_id, target_id, "reject", approver, comment, fingerprint, None, as_json, temporal)


def remembered(on: bool, for_s: float | None, when: str | None) -> Remember | None:
    from durable_loop.cli.errors import CliError
    from durable_loop.core.approval_models import Remember
    from durable_loop.core.errors import ErrorCode

    if not on:
        if for_s is not None or when is not None:
            raise CliError(ErrorCode.INVALID_DECISION, "--for and --when go with --remember")
        return None
    condition = parse_arguments(when, option="--when")
    return Remember(for_s=for_s, condition=condition)


def parse_arguments(text: str | None, option: str = "--args") -> dict[str, JsonValue] | None:
    if text is None:
        return None
    import json

    from durable_loop.cli.errors import CliError
    from durable_loop.core.errors import ErrorCode

    try:
        edited = json.loads(text)
    except ValueError as err:
        raise CliError(ErrorCode.INVALID_JSON, f"{option} is not JSON: {err}") from None
    if not isinstance(edited, dict):
        raise CliError(ErrorCode.INVALID_JSON, f"{option} must be a JSON object")
    return edited


def decide(
    session_id: str,
    target_id: str,
    verdict: Verdict | InDoubtAnswer,
    approver: str,
    comment: str | None,
    fingerprint: str | None,
    arguments: dict[str, JsonValue] | None,
    as_json: bool,
    temporal: dict[str, object],
    *,
    remember: Remember | None = None,
    calls_only: bool = False,
    result: str | None = None,
) -> None:
    """Send a person's decision and print its outcome. ``calls_only``: ``target_id`` names
    a held tool call (the ``tool-calls`` commands), proposals are not read; ``result``: a
    call in doubt's result text, with the answer ``happened``."""
    import asyncio

    from durable_loop.cli.commands.people_view import call_decided_line, proposal_decided_line
    from durable_loop.core.proposals import DecisionResult
    from durable_loop.core.visible_text import visible

    decided = asyncio.run(
        _send(
            session_id,
            target_id,
            verdict,
            approver,
            comment,
            fingerprint,
            arguments,
            temporal,
            remember,
            calls_only,
            result,
        )
    )
    if as_json:
        typer.echo(decided.model_dump_json(indent=2))
    elif not isinstance(decided, DecisionResult):
        typer.echo(call_decided_line(decided))
    else:
        typer.echo(proposal_decided_line(decided))
        if decided.error is not None:
            typer.echo(visible(f"  {decided.error.code}: {decided.error.message}"), err=True)
    if isinstance(decided, DecisionResult) and decided.status in {"conflict", "failed"}:
        raise typer.Exit(1)


async def _send(
    session_id: str,
    target_id: str,
    verdict: Verdict | InDoubtAnswer,
    approver: str,
    comment: str | None,
    fingerprint: str | None,
    arguments: dict[str, JsonValue] | None,
    temporal: dict[str, object],
    remember: Remember | None,
    calls_only: bool,
    result: str | None,
) -> ToolCallDecided | DecisionResult:
    from durable_loop.cli.commands.session_rpc import known_error, temporal_client
    from durable_loop.client.proposals import ProposalClient
    from durable_loop.client.tool_approvals import ToolApprovalClient

    client = await temporal_client(temporal)
    calls, proposals = ToolApprovalClient(client), ProposalClient(client)
    try:
        held, proposed = await _listings(session_id, calls, proposals, calls_only)
        # a decided id goes the same way: the client, or the workflow for a decision bound
        # to --fingerprint, says how it was decided
        if calls_only or target_id in _call_ids(held):
            call = await calls.decision_for(
                session_id,
                target_id,
                verdict,
                approver,
                comment=comment,
                arguments=arguments,
                fingerprint=fingerprint,
                listing=held,
                remember=remember,
                result=result,
            )
            return await calls.decide(session_id, call)
        if target_id in _proposal_ids(proposed):
            if arguments is not None or remember is not None:
                _refuse_arguments(target_id)
            decision = await _proposal_decision(
                proposals, proposed, session_id, target_id, verdict, approver, comment, fingerprint
            )
            return await proposals.decide(session_id, decision)
    except Exception as err:
        raise known_error(err, session_id) from None
    raise not_pending(session_id, target_id, held, proposed)


async def _listings(
    session_id: str, calls: ToolApprovalClient, proposals: ProposalClient, calls_only: bool
) -> tuple[ToolApprovalList, ProposalList]:
    """The held calls and (unless ``calls_only``) the proposals, read at once."""
    import asyncio

    from durable_loop.core.proposals import ProposalList

    if calls_only:
        return await calls.listing(session_id), ProposalList()
    held, proposed = await asyncio.gather(
        calls.listing(session_id), proposals.proposals(session_id)
    )
    return held, proposed


def _call_ids(held: ToolApprovalList) -> set[str]:
    return {c.call_id for c in held.pending} | {c.call_id for c in held.decided}


def _proposal_ids(proposed: ProposalList) -> set[str]:
    return {p.proposal_id for p in proposed.pending} | {p.proposal_id for p in proposed.decided}


async def _proposal_decision(
    proposals: ProposalClient,
    proposed: ProposalList,
    session_id: str,
    proposal_id: str,
    verdict: Verdict | InDoubtAnswer,
    approver: str,
    comment: str | None,
    fingerprint: str | None,
) -> ProposalDecision:
    """The decision on a proposal: bound to ``fingerprint``, or (an approval without one)
    to the proposal pending now."""
    from durable_loop.core.proposals import ProposalDecision

    if verdict not in ("confirm", "reject"):
        _refuse_answer(proposal_id)
    if fingerprint is None and verdict == "confirm":
        return await proposals.decision_for(
            session_id, proposal_id, verdict, approver, comment, listing=proposed
        )
    return ProposalDecision(
        proposal_id=proposal_id,
        verdict=verdict,
        approver=approver,
        fingerprint=fingerprint,
        comment=comment,
    )


def _refuse_arguments(proposal_id: str) -> NoReturn:
    from durable_loop.cli.errors import CliError
    from durable_loop.core.errors import ErrorCode

    raise CliError(
        ErrorCode.INVALID_DECISION,
        f"{proposal_id} is a proposal: --args and --remember are for tool calls only",
    )


def _refuse_answer(proposal_id: str) -> NoReturn:
    from durable_loop.cli.errors import CliError
    from durable_loop.core.errors import ErrorCode

    raise CliError(
        ErrorCode.INVALID_DECISION,
        f"{proposal_id} is a proposal: it is approved or rejected, not answered",
    )


def not_pending(
    session_id: str, target_id: str, held: ToolApprovalList, proposed: ProposalList
) -> Exception:
    """NOT_PENDING, naming what does wait (ids and tool names made visible)."""
    from durable_loop.cli.codes import CliCode
    from durable_loop.cli.errors import CliError
    from durable_loop.core.visible_text import visible

    waiting = [f"{visible(c.call_id)} (tool call {visible(c.shown_tool)})" for c in held.pending]
    waiting += [f"{visible(p.proposal_id)} (proposal)" for p in proposed.pending]
    now = (
        f"waiting now: {', '.join(waiting[:5])}{' and more' if len(waiting) > 5 else ''}"
        if waiting
        else "nothing waits for a person there"
    )
    session = visible(session_id)
    return CliError(
        CliCode.NOT_PENDING,
        f"no tool call or proposal {target_id!r} waits in session {session}; {now} "
        f"(`durable-loop pending {session}`)",
    )
