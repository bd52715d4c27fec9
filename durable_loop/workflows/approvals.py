"""Tool calls held for a person, kept in the session workflow's state.

:class:`ApprovalBook` holds the calls of a turn that need approval (their arguments read
from the store once, for the condition and for display), arms one durable expiry timer
per call, checks decisions (the same checks and codes as fact proposals) and records each
accepted decision, and each refused Signal, as an audit row. The message's loop parks
while calls of it are held and resumes once all are decided (see ``tool_loop``).
What it keeps and how a call is settled is :class:`~durable_loop.workflows.approval_records.
ApprovalRecords`; calls in doubt follow :mod:`durable_loop.workflows.in_doubt_holds`.
:class:`durable_loop.workflows.approval_handlers.ApprovalHandlers` exposes it as a
Query, a Signal and an Update.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from pydantic import JsonValue

with workflow.unsafe.imports_passed_through():
    from durable_loop.core.activity_contracts import ToolRunOutput
    from durable_loop.core.activity_refs import READ_TOOL_CALLS_REF
    from durable_loop.core.approvals import (
        PATCH_IN_DOUBT,
        PATCH_TOOL_APPROVALS,
        PendingToolCall,
        ReadToolCallsInput,
        ReadToolCallsOutput,
        Remember,
        ToolCallDecided,
        ToolCallDecision,
        ToolPolicy,
        WithdrawToolPolicy,
        allowed_approvers,
        edit_problem,
        gated_by_name,
        hold_fingerprint,
        needs_approval,
        policy_allowing,
        remember_problem,
        standing_policy,
        with_policy,
    )
    from durable_loop.core.errors import CodedError, ErrorCode
    from durable_loop.core.guards import CallDecision
    from durable_loop.core.schema_coercion import coerce_to_schema

from durable_loop.workflows.activity_calls import run_local_activity
from durable_loop.workflows.approval_records import ApprovalRecords
from durable_loop.workflows.in_doubt_holds import answer_checked, decided_status
from durable_loop.workflows.proposals import DECISION_RULES_PATCH, check_decider
from durable_loop.workflows.refusals import refuse

KEEP_PATCH = "keep-held-decisions"


def refuse_unheld(decision: CallDecision, why: str) -> None:
    """Turn a gated call that cannot be held into a refusal (in place)."""
    decision.action = "reject"
    decision.error = CodedError(
        code=ErrorCode.TOOL_NOT_ALLOWED,
        message=f"tool {decision.call.name!r} needs a person's approval and {why}; it did not run",
    )


class ApprovalBook(ApprovalRecords):
    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Arm the expiry timers of calls carried over from the previous run."""
        self.keeps_held = workflow.patched(KEEP_PATCH)
        self.strict = workflow.patched(DECISION_RULES_PATCH)
        self.settles_doubt = workflow.patched(PATCH_IN_DOUBT)
        for call_id in self.pending:
            self._arm(call_id)

    # ------------------------------------------------------------------ holding calls

    async def hold(
        self, decisions: list[CallDecision], *, message_id: str, turn: int, assistant_seq: int
    ) -> list[PendingToolCall]:
        """Hold the calls (of those about to execute) that need a person's approval."""
        candidates = self.gated(decisions)
        if not candidates or not workflow.patched(PATCH_TOOL_APPROVALS):
            return []
        read = await self._read(candidates, assistant_seq)
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
            pending = self._pending(decision, arguments, message_id, turn, assistant_seq)
            pending.fingerprint = stored.fingerprint
            if self.strict:
                pending.fingerprint = hold_fingerprint(pending, stored.fingerprint)
            held.append(self._keep(pending))
        for decision in unreadable:
            refuse_unheld(decision, "its arguments could not be read from the store")
        return held

    async def hold_in_doubt(
        self,
        doubted: list[tuple[CallDecision, ToolRunOutput, int]],
        *,
        message_id: str,
        turn: int,
        assistant_seq: int,
    ) -> list[PendingToolCall]:
        """Hold calls in doubt (each with its tool output and the re-runs a person already
        allowed) for a person's answer; no standing approval answers for them."""
        read = await self._read([d for d, _, _ in doubted], assistant_seq)
        held: list[PendingToolCall] = []
        for (decision, output, reruns), stored in zip(doubted, read.calls, strict=True):
            arguments = stored.arguments if stored.arguments is not None else {}
            pending = self._pending(decision, arguments, message_id, turn, assistant_seq)
            pending.kind, pending.doubt, pending.reruns = "in_doubt", output.preview, reruns
            pending.fingerprint = hold_fingerprint(pending, stored.fingerprint)
            held.append(self._keep(pending))
        return held

    async def _read(self, decisions: list[CallDecision], assistant_seq: int) -> ReadToolCallsOutput:
        """The calls' arguments (and their fingerprints), read from the store once."""
        return await run_local_activity(
            READ_TOOL_CALLS_REF,
            ReadToolCallsInput(
                session_id=self.session_id,
                assistant_seq=assistant_seq,
                call_indexes=[d.call.index for d in decisions],
            ),
            start_to_close_timeout=timedelta(seconds=30),
        )

    def _pending(
        self,
        decision: CallDecision,
        arguments: dict[str, JsonValue],
        message_id: str,
        turn: int,
        assistant_seq: int,
    ) -> PendingToolCall:
        call, now = decision.call, workflow.now()
        spec = self.specs.get(call.name)
        return PendingToolCall(
            call_id=call.id,
            tool=call.name,
            original_name=spec.original_name if spec is not None else None,
            arguments=arguments,
            fingerprint="",
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

    def _keep(self, pending: PendingToolCall) -> PendingToolCall:
        """Hold ``pending`` until a person decides or its timer fires."""
        self.decided.pop(pending.call_id, None)  # a call id the model used before, its approval
        self.pending[pending.call_id] = pending
        self.unread.add(pending.call_id)
        self._arm(pending.call_id)
        return pending

    def gated(self, decisions: list[CallDecision]) -> list[CallDecision]:
        """The calls whose tool may need approval (a condition may still let them run)."""
        return [
            d
            for d in decisions
            if d.call.name in self.specs and gated_by_name(self.specs[d.call.name], self.settings)
        ]

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
        verdict = answer_checked(pending, decision)
        check_decider(verdict, decision.approver, decision.comment, strict=self.strict)
        remembered = remember_problem(decision) if self.strict else None
        if remembered is not None:
            raise refuse(ErrorCode.INVALID_DECISION, remembered)
        self._check_approver(pending.tool, decision.approver)
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

    def _check_approver(self, tool: str, approver: str) -> None:
        """Refuse a person the session's approver list does not allow for ``tool``."""
        allowed = allowed_approvers(tool, self.settings)
        if allowed is not None and approver.strip() not in allowed:
            raise refuse(
                ErrorCode.APPROVER_NOT_ALLOWED,
                f"{approver.strip()!r} may not decide calls of {tool!r}; "
                f"the session allows {', '.join(map(repr, allowed)) or 'no one'}",
            )

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
        status = decided_status(pending, decision.verdict)
        arguments = self.edited(pending, decision)
        approver = decision.approver.strip()
        done = await self._settle(
            pending, status, approver, decision.comment, arguments, result=decision.result
        )
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
            if (
                waiting.kind == "approval"
                and policy_allowing([policy], waiting.tool, waiting.arguments, now) is not None
            ):
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

    # ------------------------------------------------------------------ standing approvals

    def check_withdrawal(self, request: WithdrawToolPolicy) -> ToolPolicy:
        """The standing approval ``request`` withdraws; a coded refusal when it cannot."""
        if request.session_id is not None and request.session_id != self.session_id:
            raise refuse(
                ErrorCode.UNKNOWN_TOOL_CALL,
                f"this is session {self.session_id}; the request names session "
                f"{request.session_id}",
            )
        check_decider("reject", request.withdrawn_by, request.comment, strict=True)
        policy = next((p for p in self.policies if p.call_id == request.set_on), None)
        if policy is None:
            standing = ", ".join(f"{p.tool} (set on {p.call_id})" for p in self.policies)
            raise refuse(
                ErrorCode.UNKNOWN_TOOL_CALL,
                f"no standing approval was set on call {request.set_on!r}; "
                f"standing now: {standing or 'none'}",
            )
        self._check_approver(policy.tool, request.withdrawn_by)
        return policy

    async def withdraw(self, request: WithdrawToolPolicy) -> ToolPolicy:
        """Withdraw a standing approval (checked by :meth:`check_withdrawal`), audited: later
        calls of its tool wait for a person again; calls it already let run stay run."""
        policy = self.check_withdrawal(request)
        self.policies = [p for p in self.policies if p is not policy]
        await self._audit(
            "withdraw",
            request.withdrawn_by.strip(),
            call_id=policy.call_id,
            tool=policy.tool,
            comment=request.comment,
            value=policy.model_dump(mode="json", exclude={"tool", "call_id"}),
            key=f"tool-policy-withdrawn:{workflow.info().workflow_id}:{policy.call_id}:"
            f"{policy.created_at.isoformat()}",
        )
        return policy
