"""Tool calls held for a person, kept in the session workflow's state.

:class:`ApprovalBook` holds the calls of a turn that need approval (their arguments read
from the store once, for the condition and for display), arms one durable expiry timer
per call, checks decisions (the same checks and codes as fact proposals) and records each
accepted decision, and each refused Signal, as an audit row. The message's loop parks
while calls of it are held and resumes once all are decided (see ``tool_loop``).
:class:`durable_loop.workflows.approval_handlers.ApprovalHandlers` exposes it as a
Query, a Signal and an Update.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from pydantic import JsonValue

with workflow.unsafe.imports_passed_through():
    from durable_loop.core.activity_refs import READ_TOOL_CALLS_REF
    from durable_loop.core.approvals import (
        PATCH_TOOL_APPROVALS,
        ApprovalBookState,
        PendingToolCall,
        ReadToolCallsInput,
        Remember,
        ToolApprovalList,
        ToolCallDecided,
        ToolCallDecision,
        ToolCallStatus,
        ToolPolicy,
        allowed_approvers,
        audit_op,
        edit_problem,
        edited_fields,
        gated_by_name,
        hold_fingerprint,
        needs_approval,
        policy_allowing,
        remember_problem,
        standing_policy,
        tool_call_fingerprint,
        with_policy,
    )
    from durable_loop.core.config import SessionSettings
    from durable_loop.core.decider_rules import refused_comment
    from durable_loop.core.errors import CodedError, ErrorCode
    from durable_loop.core.guards import CallDecision
    from durable_loop.core.proposals import AuditOp, DecisionAudit
    from durable_loop.core.schema_coercion import coerce_to_schema
    from durable_loop.core.tools import ToolSpec

from durable_loop.workflows.activity_calls import run_local_activity
from durable_loop.workflows.proposals import (
    DECIDED_KEPT,
    DECISION_RULES_PATCH,
    EXPIRY_ACTOR,
    REFUSED_KEPT,
    check_decider,
    record_decision,
    refused_decision,
)
from durable_loop.workflows.refusals import refusal_scope, refuse

CLOSE_ACTOR = "system:close"
CANCEL_ACTOR = "system:cancel"
KEEP_PATCH = "keep-held-decisions"
"""Settles, as rejected, the held calls of a message cancelled while parked."""


def refuse_unheld(decision: CallDecision, why: str) -> None:
    """Turn a gated call that cannot be held into a refusal (in place)."""
    decision.action = "reject"
    decision.error = CodedError(
        code=ErrorCode.TOOL_NOT_ALLOWED,
        message=f"tool {decision.call.name!r} needs a person's approval and {why}; it did not run",
    )


class ApprovalBook:
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
        self.strict = False
        """The ``decision-rules`` patch (set per run by :meth:`start`): decisions bound to
        the hold, the deadline in event order, checked names, coerced edits, audited
        refused Updates."""

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Arm the expiry timers of calls carried over from the previous run."""
        self.keeps_held = workflow.patched(KEEP_PATCH)
        self.strict = workflow.patched(DECISION_RULES_PATCH)
        for call_id in self.pending:
            self._arm(call_id)

    def state(self) -> ApprovalBookState:
        return ApprovalBookState(
            pending=list(self.pending.values()),
            decided=list(self.decided.values()),
            refused=list(self.refused),
            policies=list(self.policies),
        )

    def listing(self) -> ToolApprovalList:
        return ToolApprovalList(**self.state().model_dump())

    # ------------------------------------------------------------------ holding calls

    async def hold(
        self, decisions: list[CallDecision], *, message_id: str, turn: int, assistant_seq: int
    ) -> list[PendingToolCall]:
        """Hold the calls (of those about to execute) that need a person's approval."""
        candidates = self.gated(decisions)
        if not candidates or not workflow.patched(PATCH_TOOL_APPROVALS):
            return []
        read = await run_local_activity(
            READ_TOOL_CALLS_REF,
            ReadToolCallsInput(
                session_id=self.session_id,
                assistant_seq=assistant_seq,
                call_indexes=[d.call.index for d in candidates],
            ),
            start_to_close_timeout=timedelta(seconds=30),
        )
        now = workflow.now()
        held: list[PendingToolCall] = []
        unreadable: list[CallDecision] = []
        for decision, stored in zip(candidates, read.calls, strict=True):
            call = decision.call
            arguments = stored.arguments
            if arguments is None:
                unreadable.append(decision)
                continue
            if not needs_approval(self.specs[call.name], self.settings, arguments):
                continue
            policy = policy_allowing(self.policies, call.name, arguments, now)
            if policy is not None:
                await self._audit_by_policy(policy, decision, turn, stored.fingerprint)
                continue
            pending = PendingToolCall(
                call_id=call.id,
                tool=call.name,
                arguments=arguments,
                fingerprint=stored.fingerprint,
                args_sha256=call.args_sha256,
                session_id=self.session_id,
                message_id=message_id,
                turn=turn,
                assistant_seq=assistant_seq,
                call_index=call.index,
                result_seq=decision.result_seq,
                created_at=now,
                expires_at=now + timedelta(seconds=self.settings.ttl_s),
            )
            if self.strict:
                pending.fingerprint = hold_fingerprint(pending, stored.fingerprint)
            self.decided.pop(call.id, None)  # a call id the model used before
            self.pending[call.id] = pending
            self.unread.add(call.id)
            self._arm(call.id)
            held.append(pending)
        for decision in unreadable:
            refuse_unheld(decision, "its arguments could not be read from the store")
        return held

    def gated(self, decisions: list[CallDecision]) -> list[CallDecision]:
        """The calls whose tool may need approval (a condition may still let them run)."""
        return [
            d
            for d in decisions
            if d.call.name in self.specs and gated_by_name(self.specs[d.call.name], self.settings)
        ]

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

    # ------------------------------------------------------------------ decisions

    def check(self, decision: ToolCallDecision) -> None:
        """Raise a coded refusal (:func:`refuse`) for a decision that must not be applied."""
        call_id = decision.call_id
        if decision.session_id is not None and decision.session_id != self.session_id:
            raise refuse(
                ErrorCode.UNKNOWN_TOOL_CALL,
                f"this is session {self.session_id}; the decision names session "
                f"{decision.session_id}",
            )
        pending = self.pending.get(call_id)
        if pending is None:
            done = self.decided.get(call_id)
            if done is not None:
                expired = done.status == "expired"
                code = ErrorCode.EXPIRED if expired else ErrorCode.ALREADY_DECIDED
                raise refuse(code, f"tool call {call_id} is {done.status}")
            raise refuse(
                ErrorCode.UNKNOWN_TOOL_CALL, f"no tool call {call_id!r} waits for approval"
            )
        if not self.strict and workflow.now() >= pending.expires_at:
            raise refuse(ErrorCode.EXPIRED, f"tool call {call_id} expired at {pending.expires_at}")
        check_decider(decision.verdict, decision.approver, decision.comment, strict=self.strict)
        remembered = remember_problem(decision) if self.strict else None
        if remembered is not None:
            raise refuse(ErrorCode.INVALID_DECISION, remembered)
        allowed = allowed_approvers(pending.tool, self.settings)
        if allowed is not None and decision.approver.strip() not in allowed:
            raise refuse(
                ErrorCode.APPROVER_NOT_ALLOWED,
                f"{decision.approver.strip()!r} may not decide calls of {pending.tool!r}; "
                f"the session allows {', '.join(map(repr, allowed)) or 'no one'}",
            )
        if decision.fingerprint != pending.fingerprint:
            raise refuse(
                ErrorCode.FINGERPRINT_MISMATCH,
                f"tool call {call_id} has fingerprint {pending.fingerprint}; "
                f"the decision names {decision.fingerprint!r}",
            )
        if decision.arguments is None:
            return
        if decision.verdict != "confirm":
            raise refuse(ErrorCode.INVALID_DECISION, "only a confirmation carries arguments")
        spec = self.specs.get(pending.tool)
        if spec is None:  # a new run still loading its catalog
            message = f"tool {pending.tool!r} is not loaded yet; retry"
            raise refuse(ErrorCode.TOOL_NOT_FOUND, message)
        problem = edit_problem(spec, decision.arguments, self.max_args_bytes)
        if problem is not None:
            raise refuse(ErrorCode(problem.code), problem.message)

    def edited(
        self, pending: PendingToolCall, decision: ToolCallDecision
    ) -> dict[str, JsonValue] | None:
        """The arguments the call runs with after ``decision``: its edit, in the tool's types."""
        spec = self.specs.get(pending.tool)
        if decision.arguments is None or not self.strict or spec is None:
            return decision.arguments
        coerced = coerce_to_schema(spec.parameters, decision.arguments)
        return coerced if isinstance(coerced, dict) else decision.arguments

    async def decide(self, decision: ToolCallDecision) -> ToolCallDecided:
        pending = self.pending.get(decision.call_id)
        if pending is None:
            done = self.decided.get(decision.call_id)
            if done is None:
                raise ApplicationError(
                    f"no tool call {decision.call_id!r} waits for approval",
                    type=ErrorCode.UNKNOWN_TOOL_CALL,
                )
            return done
        status: ToolCallStatus = "confirmed" if decision.verdict == "confirm" else "rejected"
        arguments = self.edited(pending, decision)
        approver = decision.approver.strip()
        done = await self._settle(pending, status, approver, decision.comment, arguments)
        if self.strict and decision.remember is not None and status == "confirmed":
            await self._remember(pending, approver, decision.remember)
        return done

    async def _remember(self, approved: PendingToolCall, approver: str, remember: Remember) -> None:
        """Keep a standing approval of the tool, audited, and let the calls already waiting
        that it allows run (each settled as confirmed by the same person, once)."""
        now = workflow.now()
        policy = standing_policy(approved.tool, approved.call_id, approver, remember, now)
        self.policies = with_policy(self.policies, policy)
        await self._audit(
            "allow",
            approver,
            call_id=approved.call_id,
            tool=approved.tool,
            turn=approved.turn,
            value=policy.model_dump(mode="json", exclude={"tool", "approved_by", "call_id"}),
            key=f"tool-policy-set:{workflow.info().workflow_id}:{approved.call_id}:"
            f"{approved.result_seq}",
        )
        for waiting in list(self.pending.values()):
            if policy_allowing([policy], waiting.tool, waiting.arguments, now) is not None:
                note = f"allowed by {approver}'s standing approval (set on {approved.call_id})"
                await self._settle(
                    waiting, "confirmed", approver, note, None, policy=approved.call_id
                )

    async def _audit_by_policy(
        self, policy: ToolPolicy, decision: CallDecision, turn: int, arguments_fingerprint: str
    ) -> None:
        call_id, seq = decision.call.id, decision.result_seq
        await self._audit(
            "confirm",
            policy.approved_by,
            call_id=call_id,
            tool=policy.tool,
            turn=turn,
            comment=f"allowed by a standing approval (set on {policy.call_id})",
            value={"policy": policy.call_id, "arguments_fingerprint": arguments_fingerprint},
            key=f"tool-policy:{workflow.info().workflow_id}:{call_id}:{seq}",
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
    ) -> ToolCallDecided:
        """``policy``: the call whose remembered approval settles this one."""
        timer = self._timers.pop(pending.call_id, None)
        if timer is not None and status != "expired":
            timer.cancel()
        edited = edited_fields(pending.arguments, arguments) if arguments is not None else []
        result = ToolCallDecided(
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
        )
        self.pending.pop(pending.call_id, None)
        self.decided[pending.call_id] = result
        self._evict()
        value: dict[str, JsonValue] = {"fingerprint": pending.fingerprint}
        if self.strict:  # the hold's fingerprint names no arguments: keep theirs for readers
            value["arguments_fingerprint"] = tool_call_fingerprint(pending.tool, pending.arguments)
        if edited:
            value |= {"edited_fields": list(edited), "arguments": arguments}
        if policy is not None:
            value["policy"] = policy
        await self._audit(
            audit_op(status, bool(edited)),
            actor,
            call_id=pending.call_id,
            tool=pending.tool,
            turn=pending.turn,
            comment=comment,
            value=value,
            key=f"tool-decision:{workflow.info().workflow_id}:{pending.call_id}:"
            f"{pending.result_seq}",
        )
        return result

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
