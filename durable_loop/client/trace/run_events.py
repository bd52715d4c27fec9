"""The Updates, Signals and decision records of one run, in order, as trace entries.

Updates are decoded by name (:mod:`.updates`). A decision sent by Signal is settled by the
activity it leads to: the audit row of a tool-call decision (``record_decision``), the
settlement of a proposal (``facts_commit`` / ``proposal_close``); the same records with no
Signal before them are the expiries and the refused Signals. (An Update its validator
refused never enters history: its caller got the code; one its handler refused, as
``decision-rules`` does, is shown from its failed completion.) Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from temporalio.api.common.v1 import Payloads
from temporalio.api.failure.v1 import Failure

from durable_loop.client.trace.entries import (
    CancelEntry,
    CloseEntry,
    ProposalDecisionEntry,
    RefusalEntry,
    ToolCallDecisionEntry,
    ToolCallOutcome,
    TraceEntry,
    Via,
)
from durable_loop.client.trace.payloads import decode_payload
from durable_loop.client.trace.updates import (
    UPDATES,
    UpdateCall,
    Where,
    refusal_error,
    unknown_update,
    update_target,
    without_code,
)
from durable_loop.core import names
from durable_loop.core.approvals import SIGNAL_TOOL_CALL_DECISION, ToolCallDecision
from durable_loop.core.contracts import CancelMessageRequest, CloseRequest, RunResult
from durable_loop.core.errors import CodedError, ErrorCode
from durable_loop.core.proposals import (
    SIGNAL_DECIDE,
    DecisionAudit,
    ProposalDecision,
    SettleInput,
    SettleOutput,
)
from durable_loop.core.sub_agents import SIGNAL_SUB_AGENT_CANCEL

EXPIRY_ACTOR = "system:expiry"


@dataclass
class _Settle:
    inp: SettleInput
    where: Where
    out: SettleOutput | None = None


class EntryDecoder:
    """Fed the Update, Signal and decision events of one run in order; ``finish`` gives the
    entries and the ``RunResult``s the Updates answered with."""

    def __init__(self, run_index: int) -> None:
        self.run_index = run_index
        self.entries: list[TraceEntry] = []
        self.results: list[RunResult] = []
        self.result_events: dict[str, int] = {}
        """message id -> the event of the first Update that gave its final result"""
        self._admitted: dict[str, tuple[str, Payloads]] = {}
        self._accepted: dict[str, UpdateCall] = {}
        self._tool_signals: dict[str, tuple[ToolCallDecision, Where]] = {}
        self._proposal_signals: dict[str, tuple[ProposalDecision, Where]] = {}
        self._settles: dict[int, _Settle] = {}

    def where(self, event_id: int, at: datetime | None) -> Where:
        return Where(event_id=event_id, at=at, run_index=self.run_index)

    # -------------------------------------------------------------- Updates

    def admitted(self, update_id: str, name: str, args: Payloads) -> None:
        self._admitted[update_id] = (name, args)

    def accepted(self, update_id: str, name: str, args: Payloads, where: Where) -> None:
        if not name and update_id in self._admitted:
            name, args = self._admitted[update_id]
        self._accepted[update_id] = UpdateCall(
            name=name, update_id=update_id, args=args, where=where
        )

    def completed(
        self, update_id: str, success: Payloads | None, failure: Failure | None, where: Where
    ) -> None:
        update = self._accepted.pop(update_id, None)
        if update is None:
            return
        if failure is not None:
            self._failed(update, refusal_error(failure))
            return
        self._decoded(update, success or Payloads(), where)

    def rejected(self, name: str, args: Payloads, failure: Failure, where: Where) -> None:
        update = UpdateCall(name=name, update_id="", args=args, where=where)
        self._failed(update, refusal_error(failure))

    def _failed(self, update: UpdateCall, error: CodedError) -> None:
        if update.name not in UPDATES:
            self.entries.append(unknown_update(update, completed=True, error=error))
            return
        target, by = update_target(update)
        entry = RefusalEntry(
            **update.where.fields("update", update.name), target=target, by=by, error=error
        )
        self.entries.append(entry)

    def _decoded(self, update: UpdateCall, out: Payloads | None, where: Where) -> None:
        """``out``: the result's payloads; None while the Update runs (``where``: then its
        acceptance, else its completion)."""
        decoder = UPDATES.get(update.name)
        decoded = decoder(update, out) if decoder else None
        if decoded is None:  # a name, or payloads, of another version
            entry = unknown_update(update, completed=out is not None, error=None)
            self.entries.append(entry.model_copy(update={"unreadable": decoder is not None}))
            return
        for item in decoded:
            if isinstance(item, RunResult):
                self.results.append(item)
                self._answered(item, where.event_id)
            else:
                self.entries.append(item)

    def _answered(self, result: RunResult, event_id: int) -> None:
        """Keep when the message ended: the first Update that answered it with its final
        result (a later ``message_result`` only read it again)."""
        if result.status != "awaiting_approval":
            self.result_events.setdefault(result.message_id, event_id)

    # -------------------------------------------------------------- Signals

    def signaled(self, name: str, args: Payloads, where: Where) -> None:
        if name == SIGNAL_TOOL_CALL_DECISION:
            tool = decode_payload(args, ToolCallDecision)
            if tool is not None:
                self._tool_signals[tool.call_id] = (tool, where)
        elif name == SIGNAL_DECIDE:
            proposal = decode_payload(args, ProposalDecision)
            if proposal is not None:
                self._proposal_signals[proposal.proposal_id] = (proposal, where)
        elif name in (names.SIGNAL_CANCEL_MESSAGE, SIGNAL_SUB_AGENT_CANCEL):
            cancel = decode_payload(args, CancelMessageRequest)
            if cancel is not None:
                self.entries.append(
                    CancelEntry(
                        **where.fields("signal", name),
                        message_id=cancel.message_id,
                        reason=cancel.reason,
                    )
                )
        elif name == names.SIGNAL_CLOSE:
            close = decode_payload(args, CloseRequest)
            if close is not None:
                self.entries.append(CloseEntry(**where.fields("signal", name), reason=close.reason))

    # -------------------------------------------------------------- decision records

    def audit(self, audit: DecisionAudit, where: Where) -> None:
        """One ``record_decision`` audit row: a tool-call decision or a refused Signal."""
        if audit.target == "tool" and audit.call_id is not None:
            signal = self._tool_signals.pop(audit.call_id, None)
            sent = signal[1] if signal else where
            by_signal = signal is not None
        elif audit.proposal_id is not None:
            signal = None
            proposal = self._proposal_signals.pop(audit.proposal_id, None)
            sent = proposal[1] if proposal else where
            by_signal = proposal is not None
        else:
            return
        if audit.op == "refused":
            if by_signal:  # a refused Update (``decision-rules``) has its own failed entry
                self.entries.append(_refused(audit, sent))
        elif audit.target == "tool" and audit.op == "expire":
            self.entries.append(_expired(audit, where))
        elif audit.target == "tool" and signal is None and _standing(audit) is not None:
            self.entries.append(_by_standing_approval(audit, where))
        elif signal is not None:
            self.entries.append(_signal_decision(audit, *signal))
        # else: the audit row of a decision an Update made, whose entry is the Update's

    def settle_scheduled(self, inp: SettleInput, where: Where) -> None:
        self._settles[where.event_id] = _Settle(inp=inp, where=where)

    def settle_completed(self, scheduled_event_id: int, result: Payloads) -> None:
        if (settle := self._settles.get(scheduled_event_id)) is not None:
            settle.out = decode_payload(result, SettleOutput)

    # -------------------------------------------------------------- the end

    def finish(self) -> tuple[list[TraceEntry], list[RunResult]]:
        for update in self._accepted.values():  # still running when history was read
            self._decoded(update, None, update.where)
        for settle in self._settles.values():
            self._settled(settle)
        for decision, where in self._tool_signals.values():
            self.entries.append(
                ToolCallDecisionEntry(
                    **where.fields("signal", SIGNAL_TOOL_CALL_DECISION),
                    call_id=decision.call_id,
                    outcome=None,
                    by=decision.approver,
                    comment=decision.comment,
                    sub_agent_session=decision.session_id,
                )
            )
        for proposal, where in self._proposal_signals.values():
            self.entries.append(_proposal_signal(proposal, where, None))
        ordered = sorted(self.entries, key=lambda e: e.event_id)
        return ordered, self.results

    def _settled(self, settle: _Settle) -> None:
        inp, out = settle.inp, settle.out
        signal = self._proposal_signals.pop(inp.proposal_id, None)
        if signal is not None:
            self.entries.append(_proposal_signal(signal[0], signal[1], out))
        elif inp.verdict == "expire":
            self.entries.append(
                ProposalDecisionEntry(
                    **settle.where.fields("timer", ""),
                    proposal_id=inp.proposal_id,
                    verdict="expire",
                    status=out.status if out else None,
                    by=inp.actor,
                    error=out.error if out else None,
                )
            )
        # else: settled by an Update, whose entry is the Update's


def _refused(audit: DecisionAudit, sent: Where) -> RefusalEntry:
    value = audit.value if isinstance(audit.value, dict) else {}
    code, message = value.get("code"), value.get("message")
    name = SIGNAL_TOOL_CALL_DECISION if audit.target == "tool" else SIGNAL_DECIDE
    error = CodedError(
        code=code if isinstance(code, str) else ErrorCode.INVALID_DECISION,
        message=message if isinstance(message, str) else "",
    )
    return RefusalEntry(
        **sent.fields("signal", name),
        target=audit.call_id or audit.proposal_id,
        by=audit.actor,
        error=without_code(error),
    )


def _standing(audit: DecisionAudit) -> str | None:
    """The call whose remembered approval settled this one (an audit row's ``policy``)."""
    value = audit.value if isinstance(audit.value, dict) else {}
    policy = value.get("policy")
    return policy if audit.op == "confirm" and isinstance(policy, str) else None


def _by_standing_approval(audit: DecisionAudit, where: Where) -> ToolCallDecisionEntry:
    return ToolCallDecisionEntry(
        **where.fields("session", ""),
        call_id=audit.call_id or "",
        tool=audit.path,
        outcome="approved",
        by=audit.actor,
        standing=_standing(audit),
    )


def _expired(audit: DecisionAudit, where: Where) -> ToolCallDecisionEntry:
    via: Via = "timer" if audit.actor == EXPIRY_ACTOR else "session"
    return ToolCallDecisionEntry(
        **where.fields(via, ""),
        call_id=audit.call_id or "",
        tool=audit.path,
        outcome="expired",
        by=audit.actor,
        comment=audit.comment,
    )


def _signal_decision(
    audit: DecisionAudit, decision: ToolCallDecision, where: Where
) -> ToolCallDecisionEntry:
    value = audit.value if isinstance(audit.value, dict) else {}
    edited = value.get("edited_fields")
    arguments = value.get("arguments")
    outcomes: dict[str, ToolCallOutcome] = {
        "confirm": "approved",
        "edit": "approved_with_edits",
        "reject": "rejected",
        "expire": "expired",
    }
    return ToolCallDecisionEntry(
        **where.fields("signal", SIGNAL_TOOL_CALL_DECISION),
        call_id=decision.call_id,
        tool=audit.path,
        outcome=outcomes.get(audit.op),
        by=audit.actor,
        comment=audit.comment,
        edited_fields=[str(f) for f in edited] if isinstance(edited, list) else [],
        arguments=arguments if isinstance(arguments, dict) else None,
    )


def _proposal_signal(
    decision: ProposalDecision, where: Where, out: SettleOutput | None
) -> ProposalDecisionEntry:
    return ProposalDecisionEntry(
        **where.fields("signal", SIGNAL_DECIDE),
        proposal_id=decision.proposal_id,
        verdict="approve" if decision.verdict == "confirm" else "reject",
        status=out.status if out else None,
        by=decision.approver,
        comment=decision.comment,
        facts_version=out.facts_version if out else None,
        error=out.error if out else None,
    )
