"""Deciding held tool calls from outside the workflow: list, approve (optionally with
edited arguments) or reject, by Query/Update/Signal; withdraw a standing approval; and a
message's final result."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import JsonValue
from temporalio.client import Client, WorkflowHandle

from durable_loop.core import names
from durable_loop.core.approval_models import (
    MAX_DECISION_BYTES,
    QUERY_TOOL_APPROVALS,
    SIGNAL_TOOL_CALL_DECISION,
    UPDATE_DECIDE_TOOL_CALL,
    UPDATE_MESSAGE_RESULT,
    UPDATE_WITHDRAW_TOOL_POLICY,
    InDoubtAnswer,
    MessageResultRequest,
    PendingToolCall,
    Remember,
    ToolApprovalList,
    ToolCallDecided,
    ToolCallDecision,
    ToolPolicy,
    WithdrawToolPolicy,
)
from durable_loop.core.canonical_json import utf8_len
from durable_loop.core.errors import DurableLoopError, ErrorCode
from durable_loop.core.proposals import Verdict, decided_word, stored_verdict

if TYPE_CHECKING:
    from durable_loop.core.results import RunResult


class ToolCallNotPending(DurableLoopError, LookupError):
    """The tool call does not wait for approval (``UNKNOWN_TOOL_CALL`` or ``ALREADY_DECIDED``)."""

    code: ErrorCode


class ToolApprovalClient:
    def __init__(self, client: Client) -> None:
        self.client = client

    def handle(self, session_id: str) -> WorkflowHandle:
        return self.client.get_workflow_handle(names.session_workflow_id(session_id))

    async def listing(self, session_id: str) -> ToolApprovalList:
        return await self.handle(session_id).query(
            QUERY_TOOL_APPROVALS, result_type=ToolApprovalList
        )

    async def pending(
        self, session_id: str, call_id: str, *, listing: ToolApprovalList | None = None
    ) -> PendingToolCall:
        """The held call, from ``listing`` when the caller has just read it."""
        listing = listing or await self.listing(session_id)
        for call in listing.pending:
            if call.call_id == call_id:
                return call
        decided = {d.call_id: d.status for d in listing.decided}
        if call_id in decided:
            raise ToolCallNotPending(
                ErrorCode.ALREADY_DECIDED,
                f"tool call {call_id} is already {decided_word(decided[call_id])}",
            )
        raise ToolCallNotPending(
            ErrorCode.UNKNOWN_TOOL_CALL, f"no tool call {call_id!r} waits for approval"
        )

    async def decide(self, session_id: str, decision: ToolCallDecision) -> ToolCallDecided:
        """Update: a decision the workflow refuses fails with its code (and is audited).
        ``approve`` is sent as the stored verdict ``confirm``."""
        return await self.handle(session_id).execute_update(
            UPDATE_DECIDE_TOOL_CALL, _sendable(decision), result_type=ToolCallDecided
        )

    async def signal(self, session_id: str, decision: ToolCallDecision) -> None:
        """Signal: fire and forget; a refused decision shows in the listing's ``refused``."""
        await self.handle(session_id).signal(SIGNAL_TOOL_CALL_DECISION, _sendable(decision))

    async def withdraw_policy(
        self, session_id: str, set_on: str, withdrawn_by: str, *, comment: str | None = None
    ) -> ToolPolicy:
        """Update: withdraw the standing approval set on call ``set_on``; later calls of its
        tool wait for a person again. Refusals fail with their code and are audited."""
        request = WithdrawToolPolicy(
            set_on=set_on, withdrawn_by=withdrawn_by, comment=comment, session_id=session_id
        )
        return await self.handle(session_id).execute_update(
            UPDATE_WITHDRAW_TOOL_POLICY, request, result_type=ToolPolicy
        )

    async def decision_for(
        self,
        session_id: str,
        call_id: str,
        verdict: Verdict | InDoubtAnswer,
        approver: str,
        *,
        comment: str | None = None,
        arguments: dict[str, JsonValue] | None = None,
        fingerprint: str | None = None,
        listing: ToolApprovalList | None = None,
        remember: Remember | None = None,
        result: str | None = None,
    ) -> ToolCallDecision:
        """A decision bound to ``fingerprint`` or, when not given, to the call pending now
        (in ``listing``, when the caller has just read it). On a call in doubt the verdict
        is an answer (``happened`` with ``result``, ``run_again``, ``give_up``)."""
        if fingerprint is None:
            pending = await self.pending(session_id, call_id, listing=listing)
            return pending.decision(
                verdict,
                approver,
                comment=comment,
                arguments=arguments,
                remember=remember,
                result=result,
            )
        return ToolCallDecision(
            call_id=call_id,
            verdict=verdict,
            approver=approver,
            fingerprint=fingerprint,
            comment=comment,
            arguments=arguments,
            session_id=session_id,
            remember=remember,
            result=result,
        )

    async def message_result(self, session_id: str, message_id: str) -> RunResult:
        """Wait for the final result of a message (``UNKNOWN_MESSAGE`` if there is none)."""
        # imported here: listing and deciding, what short-lived callers do, skip it
        from durable_loop.core.results import RunResult

        return await self.handle(session_id).execute_update(
            UPDATE_MESSAGE_RESULT,
            MessageResultRequest(message_id=message_id),
            result_type=RunResult,
        )


def _sendable(decision: ToolCallDecision) -> ToolCallDecision:
    """The decision as the workflow takes it; one too large for any session is refused
    here (``ARGUMENTS_TOO_LARGE``), before Temporal refuses its payload without a code."""
    size = utf8_len(decision.model_dump_json())
    if size > MAX_DECISION_BYTES:
        raise DurableLoopError(
            ErrorCode.ARGUMENTS_TOO_LARGE,
            f"the decision on {decision.call_id} is {size} bytes; the limit is "
            f"{MAX_DECISION_BYTES} (a session takes edited arguments up to its "
            "max_tool_args_bytes, 200 000 by default)",
        )
    return _stored(decision)


def _stored(decision: ToolCallDecision) -> ToolCallDecision:
    verdict = stored_verdict(decision.verdict)
    if verdict == decision.verdict:
        return decision
    return decision.model_copy(update={"verdict": verdict})
