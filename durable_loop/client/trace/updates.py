"""Updates decoded by name: each name stands for the models of its request and result
(``send_message``: a ``UserMessage`` in, a ``RunResult`` out; ``decide_tool_call``: a
``ToolCallDecision`` in, a ``ToolCallDecided`` out; ...). A name this version does not know,
or payloads of another shape, become an :class:`UnknownUpdateEntry`; a failed Update is a
:class:`RefusalEntry` with its code. Pure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TypedDict

from pydantic import BaseModel
from temporalio.api.common.v1 import Payloads
from temporalio.api.failure.v1 import Failure

from durable_loop.client.trace.entries import (
    BudgetChangeEntry,
    CancelEntry,
    ModelSwitchEntry,
    ProposalDecisionEntry,
    ToolCallDecisionEntry,
    ToolCallOutcome,
    TraceEntry,
    UnknownUpdateEntry,
    Via,
)
from durable_loop.client.trace.payloads import decode_payload, failure_error
from durable_loop.core import names
from durable_loop.core.approvals import (
    UPDATE_DECIDE_TOOL_CALL,
    UPDATE_MESSAGE_RESULT,
    MessageResultRequest,
    ToolCallDecided,
    ToolCallDecision,
)
from durable_loop.core.budget import BudgetChange, BudgetChangeResult
from durable_loop.core.contracts import (
    CancelMessageRequest,
    RunResult,
    SwitchModelRequest,
    SwitchModelResult,
    UserMessage,
)
from durable_loop.core.errors import CodedError
from durable_loop.core.proposals import UPDATE_DECIDE, DecisionResult, ProposalDecision


class Placed(TypedDict):
    """The fields every entry starts with."""

    via: Via
    name: str
    event_id: int
    at: datetime | None
    run_index: int


@dataclass
class Where:
    """Where in the run a record is: its event, time and run."""

    event_id: int
    at: datetime | None
    run_index: int

    def fields(self, via: Via, name: str) -> Placed:
        return Placed(
            via=via, name=name, event_id=self.event_id, at=self.at, run_index=self.run_index
        )


@dataclass
class UpdateCall:
    name: str
    update_id: str
    args: Payloads
    where: Where


# ---------------------------------------------------------------- Updates by name

Decoded = list[TraceEntry | RunResult]
Decoder = Callable[[UpdateCall, Payloads | None], Decoded | None]
"""(the accepted Update, its result payloads or None while it runs) -> what it was; None
when its payloads have another shape."""


def _tool_outcome(decided: ToolCallDecided) -> ToolCallOutcome:
    if decided.status == "confirmed":
        return "approved_with_edits" if decided.edited_fields else "approved"
    return decided.status


def _message(update: UpdateCall, out: Payloads | None) -> Decoded | None:
    if out is None:
        return []  # the message is still being answered
    result = decode_payload(out, RunResult)
    return [result] if result is not None else None


def _cancel(update: UpdateCall, out: Payloads | None) -> Decoded | None:
    request = decode_payload(update.args, CancelMessageRequest)
    if request is None:
        return None
    result = decode_payload(out, RunResult) if out is not None else None
    entry = CancelEntry(
        **update.where.fields("update", update.name),
        message_id=result.message_id if result else request.message_id,
        reason=request.reason,
        status=result.status if result else None,
    )
    return [entry, result] if result is not None else [entry]


def _tool_call(update: UpdateCall, out: Payloads | None) -> Decoded | None:
    request = decode_payload(update.args, ToolCallDecision)
    if request is None:
        return None
    decided = decode_payload(out, ToolCallDecided) if out is not None else None
    entry = ToolCallDecisionEntry(
        **update.where.fields("update", update.name),
        call_id=request.call_id,
        outcome=_tool_outcome(decided) if decided else None,
        by=decided.decided_by if decided else request.approver,
        comment=request.comment,
        sub_agent_session=request.session_id,
        remembered=request.remember if request.verdict == "confirm" else None,
    )
    if decided is not None:
        entry = entry.model_copy(
            update={
                "tool": decided.tool,
                "message_id": decided.message_id,
                "edited_fields": decided.edited_fields,
                "arguments": decided.arguments,
                "comment": decided.comment,
            }
        )
    return [entry]


def _proposal(update: UpdateCall, out: Payloads | None) -> Decoded | None:
    request = decode_payload(update.args, ProposalDecision)
    if request is None:
        return None
    result = decode_payload(out, DecisionResult) if out is not None else None
    verdict = "approve" if request.verdict == "confirm" else "reject"
    return [
        ProposalDecisionEntry(
            **update.where.fields("update", update.name),
            proposal_id=request.proposal_id,
            verdict=verdict,
            status=result.status if result else None,
            by=result.decided_by if result else request.approver,
            comment=request.comment,
            facts_version=result.facts_version if result else None,
            error=result.error if result else None,
        )
    ]


def _budget(update: UpdateCall, out: Payloads | None) -> Decoded | None:
    change = decode_payload(update.args, BudgetChange)
    if change is None:
        return None
    result = decode_payload(out, BudgetChangeResult) if out is not None else None
    return [
        BudgetChangeEntry(
            **update.where.fields("update", update.name),
            by=change.changed_by.strip(),
            previous=result.previous if result else None,
            budget=result.budget if result else None,
            used_tokens=result.used_tokens if result else None,
            comment=change.comment,
        )
    ]


def _switch(update: UpdateCall, out: Payloads | None) -> Decoded | None:
    request = decode_payload(update.args, SwitchModelRequest)
    if request is None:
        return None
    result = decode_payload(out, SwitchModelResult) if out is not None else None
    fallbacks = [e.model for e in request.fallback_llms or []]
    return [
        ModelSwitchEntry(
            **update.where.fields("update", update.name),
            previous_model=result.previous_model if result else None,
            model=result.model if result else request.llm.model,
            fallback_models=result.fallback_models if result else fallbacks,
        )
    ]


UPDATES: dict[str, Decoder] = {
    names.UPDATE_SEND_MESSAGE: _message,
    UPDATE_MESSAGE_RESULT: _message,
    names.UPDATE_CANCEL_MESSAGE: _cancel,
    UPDATE_DECIDE_TOOL_CALL: _tool_call,
    UPDATE_DECIDE: _proposal,
    names.UPDATE_SET_BUDGET: _budget,
    names.UPDATE_SWITCH_MODEL: _switch,
}
"""Every Update the session workflows define, by name."""

REQUESTS: dict[str, type[BaseModel]] = {
    names.UPDATE_SEND_MESSAGE: UserMessage,
    UPDATE_MESSAGE_RESULT: MessageResultRequest,
    names.UPDATE_CANCEL_MESSAGE: CancelMessageRequest,
    UPDATE_DECIDE_TOOL_CALL: ToolCallDecision,
    UPDATE_DECIDE: ProposalDecision,
    names.UPDATE_SET_BUDGET: BudgetChange,
    names.UPDATE_SWITCH_MODEL: SwitchModelRequest,
}


def update_target(update: UpdateCall) -> tuple[str | None, str | None]:
    """(what a failed Update named, who sent it), from its request."""
    model = REQUESTS.get(update.name)
    request = decode_payload(update.args, model) if model else None
    if isinstance(request, ToolCallDecision):
        return request.call_id, request.approver
    if isinstance(request, ProposalDecision):
        return request.proposal_id, request.approver
    if isinstance(request, CancelMessageRequest | MessageResultRequest | UserMessage):
        return request.message_id, None
    if isinstance(request, BudgetChange):
        return None, request.changed_by
    return None, None


def unknown_update(
    update: UpdateCall, *, completed: bool, error: CodedError | None
) -> UnknownUpdateEntry:
    return UnknownUpdateEntry(
        **update.where.fields("update", update.name),
        update_id=update.update_id,
        completed=completed,
        error=error,
    )


def without_code(error: CodedError) -> CodedError:
    """The error whose message no longer repeats its code (refusals lead with it)."""
    prefix, message = f"{error.code}: ", error.message
    while message.startswith(prefix):
        message = message[len(prefix) :]
    return error.model_copy(update={"message": message})


def refusal_error(failure: Failure) -> CodedError:
    return without_code(failure_error(failure))
