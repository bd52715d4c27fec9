"""Held tool calls over HTTP: the listing, decisions, answers on calls in doubt, and
withdrawing a standing approval. Mounted beside ``api.py`` under the same token rule."""

from __future__ import annotations

from fastapi import APIRouter, Depends
from pydantic import JsonValue

from durable_loop.core.approvals import (
    InDoubtAnswer,
    Remember,
    ToolApprovalList,
    ToolCallDecided,
    ToolCallDecision,
    ToolPolicy,
)
from durable_loop.core.proposals import STORED_VERDICTS, Verdict
from durable_loop.service.auth import require_identity
from durable_loop.service.deps import ServiceDeps
from durable_loop.service.models import AnswerToolCall, DecideToolCall, WithdrawPolicy
from durable_loop.service.params import ERROR_RESPONSES, CallId, Deps, Identity, SessionId
from durable_loop.service.unbound_decisions import require_fingerprint

router = APIRouter(
    prefix="/v1", dependencies=[Depends(require_identity)], responses=ERROR_RESPONSES
)


@router.get("/sessions/{session_id}/tool-calls", tags=["tool calls"])
async def session_tool_calls(session_id: SessionId, deps: Deps) -> ToolApprovalList:
    """Tool calls that wait for a person, recent decisions and refused decisions."""
    listing = await deps.sessions.tool_approvals(session_id)
    deps.directory.remember(session_id)
    return listing


@router.post("/sessions/{session_id}/tool-calls/{call_id}/decision", tags=["decisions"])
async def decide_tool_call(
    session_id: SessionId,
    call_id: CallId,
    body: DecideToolCall,
    deps: Deps,
    identity: Identity,
) -> ToolCallDecided:
    """Confirm (optionally with edited ``arguments``) or reject a held tool call, bound to
    the ``fingerprint`` the approver saw; the token's identity is the approver. Refusals
    (unknown call, expired, already decided, fingerprint mismatch, arguments that break the
    tool's schema or size limit) come from the workflow, which audits each of them.
    Without ``fingerprint``: 428 FINGERPRINT_REQUIRED, as for proposals (a service with
    ``--allow-unbound-decisions`` binds the decision to the call pending now)."""
    return await _decide_call(
        session_id,
        call_id,
        deps,
        identity,
        STORED_VERDICTS[body.verdict],
        fingerprint=body.fingerprint,
        comment=body.comment,
        arguments=body.arguments,
        remember=body.remember,
    )


@router.post("/sessions/{session_id}/tool-calls/{call_id}/answer", tags=["decisions"])
async def answer_tool_call(
    session_id: SessionId,
    call_id: CallId,
    body: AnswerToolCall,
    deps: Deps,
    identity: Identity,
) -> ToolCallDecided:
    """Settle a call in doubt: ``happened`` (``result`` becomes the call's result),
    ``run_again`` (it runs once more) or ``give_up`` (the model reads it did not run),
    bound to the ``fingerprint`` the person saw; the token's identity answers. Refused and
    audited by the workflow like a decision (an approval on a call in doubt, or an answer
    on a call awaiting approval: INVALID_DECISION)."""
    return await _decide_call(
        session_id,
        call_id,
        deps,
        identity,
        body.answer,
        fingerprint=body.fingerprint,
        comment=body.comment,
        result=body.result,
    )


async def _decide_call(
    session_id: str,
    call_id: str,
    deps: ServiceDeps,
    identity: str,
    verdict: Verdict | InDoubtAnswer,
    *,
    fingerprint: str | None,
    comment: str | None,
    arguments: dict[str, JsonValue] | None = None,
    remember: Remember | None = None,
    result: str | None = None,
) -> ToolCallDecided:
    """Send a decision on a held call as the token's identity, bound to ``fingerprint``
    (unbound only where the service allows it: the call pending now)."""
    deps.directory.remember(session_id)
    await require_fingerprint(
        fingerprint,
        deps,
        session_id=session_id,
        approver=identity,
        target="tool",
        decided_on=call_id,
        comment=comment,
    )
    if fingerprint is None:
        decision = await deps.sessions.tool_calls.decision_for(
            session_id,
            call_id,
            verdict,
            identity,
            comment=comment,
            arguments=arguments,
            remember=remember,
            result=result,
        )
    else:
        decision = ToolCallDecision(
            call_id=call_id,
            verdict=verdict,
            approver=identity,
            fingerprint=fingerprint,
            comment=comment,
            arguments=arguments,
            session_id=session_id,
            remember=remember,
            result=result,
        )
    return await deps.sessions.decide_tool_call(session_id, decision)


@router.post("/sessions/{session_id}/tool-policies/{call_id}/withdraw", tags=["decisions"])
async def withdraw_tool_policy(
    session_id: SessionId,
    call_id: CallId,
    body: WithdrawPolicy,
    deps: Deps,
    identity: Identity,
) -> ToolPolicy:
    """Withdraw the standing approval set when ``call_id`` was approved with ``remember``
    (the listing's ``policies``): later calls of its tool wait for a person again. The
    token's identity withdraws it (it must be allowed to decide the tool's calls); the
    workflow audits the withdrawal, and a refusal (no such standing approval: 404
    UNKNOWN_TOOL_CALL)."""
    deps.directory.remember(session_id)
    return await deps.sessions.tool_calls.withdraw_policy(
        session_id, call_id, identity, comment=body.comment
    )
