"""Proposals waiting for a person, kept in the session workflow's state.

:class:`ProposalBook` learns about proposals from tool results, arms one durable expiry
timer per proposal, validates decisions (unknown, already decided, expired, fingerprint
mismatch) and settles them through idempotent activities. Outcomes become notes the model
reads before its next LLM call. :class:`ProposalHandlers` exposes it as a Query, a Signal
and an Update; under the ``decision-rules`` patch a refused decision is audited whichever
channel it came by (before it, the Update's validator refused it without a trace).
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from durable_loop.core.activity_refs import (
        FACTS_COMMIT_REF,
        PROPOSAL_CLOSE_REF,
        RECORD_DECISION_REF,
    )
    from durable_loop.core.config import WorkspaceSettings
    from durable_loop.core.decider_rules import approver_problem, comment_problem, refused_comment
    from durable_loop.core.errors import CodedError, ErrorCode
    from durable_loop.core.proposals import (
        QUERY_PROPOSALS,
        SIGNAL_DECIDE,
        UPDATE_DECIDE,
        VERDICTS,
        DecisionAudit,
        DecisionResult,
        PendingProposal,
        ProposalBookState,
        ProposalDecision,
        ProposalList,
        ProposalNotice,
        RefusedDecision,
        SettleInput,
        SettleOutput,
        SettleVerdict,
        settled_phrase,
    )
    from durable_loop.core.visible_text import visible

from durable_loop.workflows.activity_calls import run_activity
from durable_loop.workflows.refusals import refusal_scope, refuse

DECIDED_KEPT = 64
REFUSED_KEPT = 32
EXPIRY_ACTOR = "system:expiry"
DECISION_RULES_PATCH = "decision-rules"
"""Patch id: decisions bound to the hold they were shown (tool calls), checked names and
comment sizes, and a deadline that is the expiry timer in event order, not the clock."""
PATCH_REFUSALS_AUDITED = "proposal-refusals-audited"
"""Patch id: a refused proposal Signal writes an audit row (before: a worker log line)."""
AUDIT_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1), maximum_interval=timedelta(seconds=60)
)
SETTLE_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    maximum_interval=timedelta(seconds=60),
    maximum_attempts=0,
    non_retryable_error_types=[ErrorCode.INVALID_ARGS],
)


def outcome_note(proposal: PendingProposal, result: DecisionResult) -> str:
    """The context the model reads on its next turn."""
    what = proposal.summary or ", ".join(proposal.paths) or "facts change"
    head = f"[workspace] Proposal {proposal.proposal_id} ({what})"
    by = result.decided_by
    if result.status == "committed":
        text = (
            f"{head} was approved by {by} and committed to the facts "
            f"(facts version {result.facts_version})."
        )
    elif result.status == "rejected":
        text = f"{head} was rejected by {by}. The facts are unchanged."
    elif result.status == "expired":
        text = f"{head} expired without a decision. The facts are unchanged."
    else:
        reason = result.error.message if result.error else result.status
        text = f"{head} was approved by {by} but not committed: {reason}"
    if result.comment:
        text += f' Comment from {by}: "{result.comment}"'
    return text


def check_decider(verdict: str, approver: str, comment: str | None, *, strict: bool) -> None:
    """The checks every decision passes, whatever it decides on (raises :func:`refuse`).
    ``strict`` (the ``decision-rules`` patch): printable, bounded approver names and
    bounded comments (:mod:`durable_loop.core.decider_rules`)."""
    if verdict not in VERDICTS:
        raise refuse(
            ErrorCode.INVALID_DECISION,
            f"verdict must be one of {', '.join(VERDICTS)}; the decision says {verdict!r}",
        )
    if strict:
        problem = approver_problem(approver) or comment_problem(comment)
        if problem is not None:
            raise refuse(ErrorCode.INVALID_DECISION, problem)
        return
    if not approver.strip():
        raise refuse(ErrorCode.INVALID_DECISION, "the approver's identity is required")
    if "\x00" in approver + (comment or ""):
        raise refuse(ErrorCode.INVALID_DECISION, "the approver or comment contains a NUL character")


def refused_decision(decided_on: str, approver: str, err: ApplicationError) -> RefusedDecision:
    """The refusal as listed and audited: the name as sent, with every hidden character
    escaped (``ali\\u0000ce``, never a forged ``alice``)."""
    return RefusedDecision(
        id=decided_on,
        approver=visible(approver).strip() or "(none)",
        error=CodedError(code=err.type or ErrorCode.INVALID_DECISION, message=err.message),
        refused_at=workflow.now(),
    )


async def record_decision(audit: DecisionAudit) -> None:
    await run_activity(
        RECORD_DECISION_REF,
        audit,
        start_to_close_timeout=timedelta(seconds=30),
        retry_policy=AUDIT_RETRY,
        summary=f"audit {audit.target} {audit.op}",
    )


class ProposalBook:
    def __init__(self, session_id: str, settings: WorkspaceSettings, state: ProposalBookState):
        self.session_id = session_id
        self.settings = settings
        self.pending = {
            p.proposal_id: p.model_copy(update={"deciding": False}) for p in state.pending
        }
        self.decided = {d.proposal_id: d for d in state.decided}
        self.notes = list(state.notes)
        self.refused = list(state.refused)
        self._timers: dict[str, asyncio.Task[None]] = {}
        self.strict = False
        """The ``decision-rules`` patch, set once per run by :meth:`start`."""

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Arm the expiry timers of proposals carried over from the previous run."""
        self.strict = workflow.patched(DECISION_RULES_PATCH)
        for proposal_id in self.pending:
            self._arm(proposal_id)

    def state(self) -> ProposalBookState:
        return ProposalBookState(
            pending=list(self.pending.values()),
            decided=list(self.decided.values()),
            notes=list(self.notes),
            refused=list(self.refused),
        )

    def listing(self) -> ProposalList:
        return ProposalList(
            pending=list(self.pending.values()),
            decided=list(self.decided.values()),
            refused=list(self.refused),
        )

    def add(self, notice: ProposalNotice, *, turn: int, call_id: str) -> None:
        if notice.proposal_id in self.pending or notice.proposal_id in self.decided:
            return
        now = workflow.now()
        self.pending[notice.proposal_id] = PendingProposal.model_validate(
            {
                **notice.model_dump(exclude={"base_version"}),
                "session_id": self.session_id,
                "turn": turn,
                "call_id": call_id,
                "created_at": now,
                "expires_at": now + timedelta(seconds=self.settings.proposal_ttl_s),
            }
        )
        self._arm(notice.proposal_id)

    # ------------------------------------------------------------------ loop hooks

    async def before_llm_turn(self) -> list[str]:
        """Wait for open decisions if the session blocks on them; hand over untold outcomes."""
        if self.settings.block_until_decision and self.pending:
            await workflow.wait_condition(lambda: not self.pending)
        notes, self.notes = self.notes, []
        return notes

    # ------------------------------------------------------------------ decisions

    def check(self, decision: ProposalDecision) -> None:
        """Raise a coded refusal (:func:`refuse`) for a decision that must not be applied."""
        proposal_id = decision.proposal_id
        if decision.verdict not in VERDICTS:
            check_decider(decision.verdict, decision.approver, decision.comment, strict=self.strict)
        proposal = self.pending.get(proposal_id)
        if proposal is None:
            done = self.decided.get(proposal_id)
            if done is not None:
                expired = done.status == "expired"
                raise refuse(
                    ErrorCode.EXPIRED if expired else ErrorCode.ALREADY_DECIDED,
                    f"proposal {proposal_id} {settled_phrase(done.status)}",
                )
            raise refuse(ErrorCode.UNKNOWN_PROPOSAL, f"no pending proposal {proposal_id!r}")
        if proposal.deciding:
            raise refuse(ErrorCode.ALREADY_DECIDED, f"proposal {proposal_id} is being settled")
        if not self.strict and workflow.now() >= proposal.expires_at:
            raise refuse(
                ErrorCode.EXPIRED, f"proposal {proposal_id} expired at {proposal.expires_at}"
            )
        check_decider(decision.verdict, decision.approver, decision.comment, strict=self.strict)
        bound = decision.verdict == "confirm" or decision.fingerprint is not None
        if bound and decision.fingerprint != proposal.fingerprint:
            raise refuse(
                ErrorCode.FINGERPRINT_MISMATCH,
                f"proposal {proposal_id} has fingerprint {proposal.fingerprint}; "
                f"the decision names {decision.fingerprint!r}",
            )

    async def decide(self, decision: ProposalDecision) -> DecisionResult:
        proposal = self.pending.get(decision.proposal_id)
        if proposal is not None and proposal.deciding:
            await workflow.wait_condition(lambda: decision.proposal_id in self.decided)
        if proposal is None or decision.proposal_id in self.decided:
            done = self.decided.get(decision.proposal_id)
            if done is None:
                raise ApplicationError(
                    f"no pending proposal {decision.proposal_id!r}",
                    type=ErrorCode.UNKNOWN_PROPOSAL,
                )
            return done
        verdict: SettleVerdict = "confirm" if decision.verdict == "confirm" else "reject"
        return await self._settle(proposal, verdict, decision.approver.strip(), decision.comment)

    async def record_refusal(self, decision: ProposalDecision, err: ApplicationError) -> None:
        """A refused Signal: visible in the Query and (patched) the audit log."""
        refused = refused_decision(decision.proposal_id, decision.approver, err)
        self.refused.append(refused)
        del self.refused[:-REFUSED_KEPT]
        if not workflow.patched(PATCH_REFUSALS_AUDITED):
            workflow.logger.warning("decision on %s ignored: %s", decision.proposal_id, err)
            return
        pending = self.pending.get(decision.proposal_id)
        await record_decision(
            DecisionAudit(
                workspace_id=pending.workspace_id if pending else self.workspace_id(),
                session_id=self.session_id,
                target="proposal",
                op="refused",
                actor=refused.approver,
                turn=pending.turn if pending else None,
                proposal_id=decision.proposal_id,
                comment=refused_comment(decision.comment),
                value={"code": refused.error.code, "message": refused.error.message},
                key=f"proposal-refused:{refusal_scope()}:{workflow.uuid4()}",
            )
        )

    def workspace_id(self) -> str:
        return self.settings.workspace_id or self.session_id

    def _arm(self, proposal_id: str) -> None:
        self._timers[proposal_id] = asyncio.create_task(self._expire(proposal_id))

    async def _expire(self, proposal_id: str) -> None:
        proposal = self.pending[proposal_id]
        delay = (proposal.expires_at - workflow.now()).total_seconds()
        if delay > 0:
            await workflow.sleep(delay, summary=f"proposal {proposal_id} expires")
        proposal = self.pending.get(proposal_id)  # type: ignore[assignment]
        if proposal is not None and not proposal.deciding:
            await self._settle(proposal, "expire", EXPIRY_ACTOR, None)

    async def _settle(
        self, proposal: PendingProposal, verdict: SettleVerdict, actor: str, comment: str | None
    ) -> DecisionResult:
        proposal.deciding = True
        timer = self._timers.pop(proposal.proposal_id, None)
        if timer is not None and verdict != "expire":
            timer.cancel()
        inp = SettleInput(
            proposal_id=proposal.proposal_id,
            workspace_id=proposal.workspace_id,
            fingerprint=proposal.fingerprint,
            verdict=verdict,
            actor=actor,
            comment=comment,
            session_id=self.session_id,
        )
        try:
            out = await run_activity(
                FACTS_COMMIT_REF if verdict == "confirm" else PROPOSAL_CLOSE_REF,
                inp,
                start_to_close_timeout=timedelta(seconds=30),
                retry_policy=SETTLE_RETRY,
                summary=f"{verdict} {proposal.proposal_id}",
            )
        except ActivityError as err:
            error = CodedError(code=ErrorCode.TOOL_ERROR, message=str(err.cause or err))
            out = SettleOutput(proposal_id=proposal.proposal_id, status="failed", error=error)
        result = DecisionResult(
            proposal_id=proposal.proposal_id,
            status=out.status,
            decided_by=actor,
            comment=comment,
            facts_version=out.facts_version,
            error=out.error,
            decided_at=workflow.now(),
        )
        self.pending.pop(proposal.proposal_id, None)
        self.decided[proposal.proposal_id] = result
        while len(self.decided) > DECIDED_KEPT:
            self.decided.pop(next(iter(self.decided)))
        self.notes.append(outcome_note(proposal, result))
        return result


class ProposalHandlers:
    """Mixed into the session workflow: the Query, Signal and Update of human decisions."""

    _proposals: ProposalBook

    @workflow.query(name=QUERY_PROPOSALS)
    def proposals(self) -> ProposalList:
        return self._proposals.listing()

    @workflow.signal(name=SIGNAL_DECIDE)
    async def proposal_decision(self, decision: ProposalDecision) -> None:
        try:
            self._proposals.check(decision)
        except ApplicationError as err:
            await self._proposals.record_refusal(decision, err)
            return
        await self._proposals.decide(decision)

    @workflow.update(name=UPDATE_DECIDE)
    async def decide_proposal(self, decision: ProposalDecision) -> DecisionResult:
        """Under the ``decision-rules`` patch the handler, not the validator, refuses a
        decision, so the refusal is audited like a Signal's."""
        if self._proposals.strict:
            try:
                self._proposals.check(decision)
            except ApplicationError as err:
                await self._proposals.record_refusal(decision, err)
                raise
        return await self._proposals.decide(decision)

    @decide_proposal.validator
    def _validate_decision(self, decision: ProposalDecision) -> None:
        if not self._proposals.strict:
            self._proposals.check(decision)
