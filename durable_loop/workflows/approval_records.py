"""What an :class:`~durable_loop.workflows.approvals.ApprovalBook` keeps and records.

:class:`ApprovalRecords` is the book's state (held calls, kept decisions, refusals, standing
approvals), the expiry timer of each held call, and how a call is settled: every decision,
expiry, close, cancel and refused decision becomes a kept record and an audit row.
"""

from __future__ import annotations

import asyncio

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from pydantic import JsonValue

with workflow.unsafe.imports_passed_through():
    from durable_loop.core.approvals import (
        ApprovalBookState,
        PendingToolCall,
        ToolApprovalList,
        ToolCallDecided,
        ToolCallDecision,
        ToolCallStatus,
        WithdrawToolPolicy,
        audit_op,
        edited_fields,
        tool_call_fingerprint,
    )
    from durable_loop.core.config import SessionSettings
    from durable_loop.core.decider_rules import refused_comment
    from durable_loop.core.proposals import AuditOp, DecisionAudit
    from durable_loop.core.tools import ToolSpec

from durable_loop.workflows.in_doubt_holds import doubt_audit, doubt_key
from durable_loop.workflows.proposals import (
    DECIDED_KEPT,
    EXPIRY_ACTOR,
    REFUSED_KEPT,
    record_decision,
    refused_decision,
)
from durable_loop.workflows.refusals import refusal_scope

CLOSE_ACTOR = "system:close"
CANCEL_ACTOR = "system:cancel"
"""Settles, as rejected, the held calls of a message cancelled while parked."""


class ApprovalRecords:
    def __init__(self, session_id: str, settings: SessionSettings, state: ApprovalBookState):
        self.session_id = session_id
        self.settings = settings.approvals
        self.workspace_id = settings.workspace.workspace_id or session_id
        self.max_args_bytes = settings.runtime.max_tool_args_bytes
        self.pending = {p.call_id: p for p in state.pending}
        self.decided = {d.call_id: d for d in state.decided}
        self.refused = list(state.refused)
        self.policies = list(state.policies)
        """Standing approvals (approve and remember); only a ``decision-rules`` run sets any."""
        self.specs: dict[str, ToolSpec] = {}
        """The tool catalog, set once the session loaded it (edits are checked against it)."""
        self._timers: dict[str, asyncio.Task[None]] = {}
        self.unread: set[str] = set()
        """Held calls whose parked message has not resumed yet: their decisions are never
        evicted (``keep-held-decisions`` patch). The session fills it from its parked
        message after a continue-as-new."""
        self.keeps_held = False
        self.settles_doubt = False
        """The ``in-doubt-to-person`` patch (set per run by :meth:`start`): a call in doubt
        is held for a person instead of ending ``TOOL_CALL_IN_DOUBT``."""
        self.strict = False
        """The ``decision-rules`` patch (set per run by :meth:`start`): decisions bound to
        the hold, the deadline in event order, checked names, coerced edits, audited
        refused Updates."""

    def state(self) -> ApprovalBookState:
        return ApprovalBookState(
            pending=list(self.pending.values()),
            decided=list(self.decided.values()),
            refused=list(self.refused),
            policies=list(self.policies),
        )

    def listing(self) -> ToolApprovalList:
        return ToolApprovalList(**self.state().model_dump())

    def all_decided(self, held: list[PendingToolCall]) -> bool:
        return all(p.call_id not in self.pending for p in held)

    def outcome(self, held: PendingToolCall) -> ToolCallDecided:
        self.unread.discard(held.call_id)
        done = self.decided.get(held.call_id)
        if done is not None:
            return done
        return ToolCallDecided(  # evicted from the kept decisions: never ran, so say so
            call_id=held.call_id,
            tool=held.tool,
            message_id=held.message_id,
            status="expired",
            decided_by=EXPIRY_ACTOR,
            fingerprint=held.fingerprint,
            decided_at=workflow.now(),
        )

    async def record_withdrawal_refusal(
        self, request: WithdrawToolPolicy, err: ApplicationError
    ) -> None:
        refused = refused_decision(request.set_on, request.withdrawn_by, err)
        self.refused.append(refused)
        del self.refused[:-REFUSED_KEPT]
        await self._audit(
            "refused",
            refused.approver,
            call_id=request.set_on,
            tool="",
            comment=refused_comment(request.comment),
            value={"code": refused.error.code, "message": refused.error.message},
            key=f"tool-refused:{refusal_scope()}:{workflow.uuid4()}",
        )

    async def record_refusal(self, decision: ToolCallDecision, err: ApplicationError) -> None:
        """A refused Signal (or, under ``decision-rules``, Update): visible in the Query and
        the audit log."""
        refused = refused_decision(decision.call_id, decision.approver, err)
        self.refused.append(refused)
        del self.refused[:-REFUSED_KEPT]
        pending = self.pending.get(decision.call_id)
        done = self.decided.get(decision.call_id)
        tool = pending.tool if pending else done.tool if done and self.strict else ""
        await self._audit(
            "refused",
            refused.approver,
            call_id=decision.call_id,
            tool=tool,
            turn=pending.turn if pending else None,
            comment=refused_comment(decision.comment),
            value={"code": refused.error.code, "message": refused.error.message},
            key=f"tool-refused:{refusal_scope()}:{workflow.uuid4()}",
        )

    async def close_held(self, held: list[PendingToolCall]) -> None:
        """The session closes: calls still waiting expire, so their message can finish."""
        for call in held:
            pending = self.pending.get(call.call_id)
            if pending is not None:
                await self._settle(pending, "expired", CLOSE_ACTOR, "the session closed", None)

    async def cancel_held(self, held: list[PendingToolCall], reason: str) -> None:
        """Their message is cancelled: calls still waiting never run (TOOL_CALL_CANCELLED)."""
        for call in held:
            pending = self.pending.get(call.call_id)
            if pending is not None:
                await self._settle(pending, "rejected", CANCEL_ACTOR, reason or None, None)

    def _arm(self, call_id: str) -> None:
        self._timers[call_id] = asyncio.create_task(self._expire(call_id))

    async def _expire(self, call_id: str) -> None:
        pending = self.pending[call_id]
        delay = (pending.expires_at - workflow.now()).total_seconds()
        if delay > 0:
            await workflow.sleep(delay, summary=f"tool call {call_id} expires")
        if self.pending.get(call_id) is pending:
            await self._settle(pending, "expired", EXPIRY_ACTOR, None, None)

    async def _settle(
        self,
        pending: PendingToolCall,
        status: ToolCallStatus,
        actor: str,
        comment: str | None,
        arguments: dict[str, JsonValue] | None,
        policy: str | None = None,
        result: str | None = None,
    ) -> ToolCallDecided:
        """``policy``: the call whose remembered approval settles this one; ``result``: the
        person's text for a call in doubt whose effect happened."""
        timer = self._timers.pop(pending.call_id, None)
        if timer is not None and status != "expired":
            timer.cancel()
        edited = edited_fields(pending.arguments, arguments) if arguments is not None else []
        decided = ToolCallDecided(
            call_id=pending.call_id,
            tool=pending.tool,
            message_id=pending.message_id,
            status=status,
            decided_by=actor,
            fingerprint=pending.fingerprint,
            comment=comment,
            arguments=arguments if edited else None,
            edited_fields=edited,
            decided_at=workflow.now(),
            kind=pending.kind,
            result=result if status == "happened" else None,
            rerun=pending.reruns + 1 if status == "run_again" else 0,
        )
        self.pending.pop(pending.call_id, None)
        self.decided[pending.call_id] = decided
        self._evict()
        value: dict[str, JsonValue] = {"fingerprint": pending.fingerprint}
        if self.strict:  # the hold's fingerprint names no arguments: keep theirs for readers
            value["arguments_fingerprint"] = tool_call_fingerprint(pending.tool, pending.arguments)
        if edited:
            value |= {"edited_fields": list(edited), "arguments": arguments}
        if policy is not None:
            value["policy"] = policy
        value |= doubt_audit(pending, status, result)
        await self._audit(
            audit_op(status, bool(edited)),
            actor,
            call_id=pending.call_id,
            tool=pending.tool,
            turn=pending.turn,
            comment=comment,
            value=value,
            key=f"tool-decision:{workflow.info().workflow_id}:{pending.call_id}:"
            f"{pending.result_seq}{doubt_key(pending)}",
        )
        return decided

    def _evict(self) -> None:
        """Keep ``DECIDED_KEPT`` decisions, and every one a parked message has yet to read:
        an evicted decision would read as expired, and the approved call would not run."""
        keep = self.unread if self.keeps_held else set()
        evictable = [call_id for call_id in self.decided if call_id not in keep]
        for call_id in evictable[: max(0, len(self.decided) - DECIDED_KEPT)]:
            del self.decided[call_id]

    async def _audit(
        self, op: AuditOp, actor: str, *, call_id: str, tool: str, **fields: object
    ) -> None:
        await record_decision(
            DecisionAudit.model_validate(
                {
                    "workspace_id": self.workspace_id,
                    "session_id": self.session_id,
                    "target": "tool",
                    "call_id": call_id,
                    "path": tool,
                    "op": op,
                    "actor": actor,
                    "actor_kind": "system" if actor.startswith("system:") else "human",
                    **fields,
                }
            )
        )
