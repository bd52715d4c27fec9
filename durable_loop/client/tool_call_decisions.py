"""Confirming or rejecting one held tool call by its id, or answering one in doubt: a
:class:`ToolApprovalClient` that binds the decision to what the person saw (or the call
pending now) and sends it."""

from __future__ import annotations

from pydantic import JsonValue

from durable_loop.client.tool_approvals import ToolApprovalClient
from durable_loop.core.approval_models import InDoubtAnswer, ToolCallDecided


class ToolCallDecisions(ToolApprovalClient):
    async def confirm(
        self,
        session_id: str,
        call_id: str,
        approver: str,
        *,
        arguments: dict[str, JsonValue] | None = None,
        comment: str | None = None,
        fingerprint: str | None = None,
    ) -> ToolCallDecided:
        """Let the call run, with ``arguments`` instead of the model's if given; bound to
        ``fingerprint`` (what the approver saw), or to the call pending right now."""
        decision = await self.decision_for(
            session_id,
            call_id,
            "confirm",
            approver,
            comment=comment,
            arguments=arguments,
            fingerprint=fingerprint,
        )
        return await self.decide(session_id, decision)

    async def reject(
        self,
        session_id: str,
        call_id: str,
        approver: str,
        *,
        comment: str | None = None,
        fingerprint: str | None = None,
    ) -> ToolCallDecided:
        """The call does not run; the model reads TOOL_CALL_REJECTED and the comment."""
        decision = await self.decision_for(
            session_id, call_id, "reject", approver, comment=comment, fingerprint=fingerprint
        )
        return await self.decide(session_id, decision)

    async def answer(
        self,
        session_id: str,
        call_id: str,
        answer: InDoubtAnswer,
        approver: str,
        *,
        result: str | None = None,
        comment: str | None = None,
        fingerprint: str | None = None,
    ) -> ToolCallDecided:
        """Settle a call in doubt: its effect ``happened`` (``result`` is what the model
        reads), ``run_again`` (once), or ``give_up`` (the model reads it did not run)."""
        decision = await self.decision_for(
            session_id,
            call_id,
            answer,
            approver,
            comment=comment,
            fingerprint=fingerprint,
            result=result,
        )
        return await self.decide(session_id, decision)
