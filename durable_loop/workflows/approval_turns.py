"""A message's loop around held tool calls: park when a turn holds calls, resume when all
are decided.

Parking ends the message's loop for now with ``awaiting_approval``; what it needs to go on
(the run summary so far and the loop's per-message memory) becomes a
:class:`ParkedMessage`, carried across continue-as-new. Resuming runs the confirmed calls
(with edited arguments where a person changed them) and gives the model a coded result
for the rejected and expired ones, so every call stays paired with a result.
"""

from __future__ import annotations

from typing import Protocol

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from durable_loop.core.activity_contracts import ToolCallSummary, ToolRunOutput
    from durable_loop.core.approvals import PendingToolCall, ToolCallDecided
    from durable_loop.core.config import SessionSettings
    from durable_loop.core.contracts import ParkedMessage, RunResult
    from durable_loop.core.errors import CodedError, ErrorCode
    from durable_loop.core.guards import CallDecision

from durable_loop.workflows.approvals import CANCEL_ACTOR, ApprovalBook, refuse_unheld
from durable_loop.workflows.error_retry import ErrorRetry
from durable_loop.workflows.typed_answers import TypedAnswer


class ParkableLoop(Protocol):
    """The parts of a message's loop that parking saves and resuming restores."""

    can_park: bool
    result: RunResult
    seen_calls: dict[str, int]
    last_ok_by_tool: dict[str, bool]
    tools_off: bool
    finalization_used: bool
    error_retry: ErrorRetry
    fallbacks_left: int
    typed: TypedAnswer | None
    settings: SessionSettings

    def turn(self) -> int: ...

    async def _execute_all(
        self,
        assistant_seq: int,
        to_run: list[CallDecision],
        approved: dict[int, ToolCallDecided] | None = None,
    ) -> dict[int, ToolRunOutput]: ...

    def _record(self, decision: CallDecision, ran: ToolRunOutput | None) -> None: ...


def result_message(decided: ToolCallDecided) -> CodedError:
    """What the model reads for a call that did not run."""
    if decided.status == "rejected" and decided.decided_by == CANCEL_ACTOR:
        return CodedError(
            code=ErrorCode.TOOL_CALL_CANCELLED,
            message="its message was cancelled while this call waited for approval; "
            "it did not run.",
        )
    if decided.status == "rejected":
        text = f"a person ({decided.decided_by}) rejected this call; it did not run."
        if decided.comment:
            text += f' Their comment: "{decided.comment}"'
        return CodedError(code=ErrorCode.TOOL_CALL_REJECTED, message=text)
    return CodedError(
        code=ErrorCode.TOOL_CALL_EXPIRED,
        message="no one decided on this call before it expired; it did not run.",
    )


def call_decision(held: PendingToolCall, decided: ToolCallDecided) -> CallDecision:
    # An edited call ran with other arguments than the model's: its result must not answer
    # a later call with the model's arguments (repeat guard, dedupe).
    sha = f"edited:{held.call_id}" if decided.edited_fields else held.args_sha256
    call = ToolCallSummary(
        index=held.call_index,
        id=held.call_id,
        name=held.tool,
        args_bytes=0,
        args_sha256=sha,
        args_valid_json=True,
    )
    if decided.status == "confirmed":
        return CallDecision(call=call, action="execute", result_seq=held.result_seq)
    return CallDecision(
        call=call, action="reject", result_seq=held.result_seq, error=result_message(decided)
    )


class HeldCalls:
    def __init__(self, loop: ParkableLoop, book: ApprovalBook | None) -> None:
        self.loop = loop
        self.book = book
        self.parked: ParkedMessage | None = None

    async def hold(self, to_run: list[CallDecision], assistant_seq: int) -> set[int]:
        """Hold the calls that need approval; their result seqs. Parks the loop if any.

        A loop that cannot park refuses its gated calls instead (TOOL_NOT_ALLOWED), and so
        does any loop for a gated call whose arguments cannot be read: a call that needs a
        person never runs without one."""
        if self.book is None or not to_run:
            return set()
        loop = self.loop
        if not loop.can_park:
            for decision in self.book.gated(to_run):
                refuse_unheld(decision, "this loop strategy cannot wait for a person")
            return set()
        held = await self.book.hold(
            to_run,
            message_id=loop.result.message_id,
            turn=loop.turn(),
            assistant_seq=assistant_seq,
        )
        if held:
            self.parked = ParkedMessage(
                message_id=loop.result.message_id,
                result=loop.result,
                held=held,
                seen_calls=loop.seen_calls,
                last_ok_by_tool=loop.last_ok_by_tool,
                tools_off=loop.tools_off,
                finalization_used=loop.finalization_used,
                error_retries_used=loop.error_retry.used,
                fallbacks_left=loop.fallbacks_left,
                output_schema=loop.typed.schema if loop.typed else None,
                output_retries_used=loop.typed.used if loop.typed else None,
            )
        return {p.result_seq for p in held}

    def interim(self) -> RunResult:
        """The answer while calls wait: ``awaiting_approval`` and the calls."""
        assert self.parked is not None
        return self.parked.result.model_copy(
            update={"status": "awaiting_approval", "pending_approvals": self.parked.held},
            deep=True,
        )

    async def resume(self, parked: ParkedMessage) -> None:
        """Restore the loop, then run or answer every held call by its decision."""
        assert self.book is not None
        loop = self.loop
        loop.result = parked.result.model_copy(deep=True)
        loop.seen_calls = dict(parked.seen_calls)
        loop.last_ok_by_tool = dict(parked.last_ok_by_tool)
        loop.tools_off = parked.tools_off
        loop.finalization_used = parked.finalization_used
        loop.error_retry.used = parked.error_retries_used
        loop.fallbacks_left = parked.fallbacks_left
        loop.typed = TypedAnswer.resumed(parked, loop.settings)
        decisions: list[CallDecision] = []
        approved: dict[int, ToolCallDecided] = {}
        for held in parked.held:
            decided = self.book.outcome(held)
            decisions.append(call_decision(held, decided))
            approved[held.result_seq] = decided
        to_run = [d for d in decisions if d.action == "execute"]
        by_seq = await loop._execute_all(parked.held[0].assistant_seq, to_run, approved)
        for decision in decisions:
            loop._record(decision, by_seq.get(decision.result_seq))
