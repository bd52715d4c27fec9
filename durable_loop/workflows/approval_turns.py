"""A message's loop around held tool calls: park when a turn holds calls, resume when all
are decided.

Parking ends the message's loop for now with ``awaiting_approval``; what it needs to go on
(the run summary so far and the loop's per-message memory) becomes a
:class:`ParkedMessage`, carried across continue-as-new. Resuming runs the confirmed calls
(with edited arguments where a person changed them) and gives the model a coded result
for the rejected and expired ones, so every call stays paired with a result.

A call of an ``effect="once"`` tool that comes back in doubt (patch ``in-doubt-to-person``)
is held the same way, for a person's answer: "happened" stores their text as its result,
"run_again" runs it once more (and may put it in doubt again), "give_up" tells the model it
did not run. Unanswered (expired, cancelled, session closed) it ends ``TOOL_CALL_IN_DOUBT``.
"""

from __future__ import annotations

from typing import Protocol

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from durable_loop.core.activity_contracts import AppendItem, ToolCallSummary, ToolRunOutput
    from durable_loop.core.approvals import PendingToolCall, ToolCallDecided
    from durable_loop.core.config import SessionSettings
    from durable_loop.core.contracts import ParkedMessage, RunResult
    from durable_loop.core.envelope import Envelope
    from durable_loop.core.errors import CodedError, ErrorCode
    from durable_loop.core.guards import CallDecision
    from durable_loop.core.messages import Message

from durable_loop.workflows.approval_records import CANCEL_ACTOR
from durable_loop.workflows.approvals import ApprovalBook, refuse_unheld
from durable_loop.workflows.reply_guard import ReplyGuard
from durable_loop.workflows.typed_answers import TypedAnswer


class ParkableLoop(Protocol):
    """The parts of a message's loop that parking saves and resuming restores."""

    can_park: bool
    result: RunResult
    seen_calls: dict[str, int]
    last_ok_by_tool: dict[str, bool]
    tools_off: bool
    reply_guard: ReplyGuard
    fallbacks_left: int
    typed: TypedAnswer | None
    settings: SessionSettings
    appends: list[AppendItem]

    def turn(self) -> int: ...

    async def _execute_all(
        self,
        assistant_seq: int,
        to_run: list[CallDecision],
        approved: dict[int, ToolCallDecided] | None = None,
    ) -> dict[int, ToolRunOutput]: ...

    def _record(self, decision: CallDecision, ran: ToolRunOutput | None) -> None: ...


def result_message(decided: ToolCallDecided, held: PendingToolCall) -> CodedError:
    """What the model reads for a call that did not run (or, in doubt, may have)."""
    if decided.kind == "in_doubt":
        return doubt_message(decided, held)
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


def doubt_message(decided: ToolCallDecided, held: PendingToolCall) -> CodedError:
    if decided.status == "given_up":
        text = (
            f"an attempt of this call stopped inside the tool, and a person ({decided.decided_by})"
            " answered that its effect did not happen and it is not run again: it did not run."
        )
        if decided.comment:
            text += f' Their comment: "{decided.comment}"'
        return CodedError(code=ErrorCode.TOOL_CALL_REJECTED, message=text)
    return CodedError(
        code=ErrorCode.TOOL_CALL_IN_DOUBT,
        message=f"{held.doubt or 'whether this call took effect is unknown.'} No one answered "
        "whether it took effect before the question closed.",
    )


def happened_result(held: PendingToolCall, decided: ToolCallDecided) -> Envelope:
    """The call's result when a person answered that its effect happened."""
    note = (
        f"an attempt of this call stopped inside the tool; a person ({decided.decided_by}) "
        "answered that its effect happened: this is the result they gave (it did not run again)"
    )
    return Envelope.success(decided.result or "it happened").model_copy(update={"warnings": [note]})


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
    if decided.status in ("confirmed", "run_again", "happened"):
        return CallDecision(call=call, action="execute", result_seq=held.result_seq)
    return CallDecision(
        call=call,
        action="reject",
        result_seq=held.result_seq,
        error=result_message(decided, held),
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
        self._park(held)
        return {p.result_seq for p in held}

    @property
    def settles_doubt(self) -> bool:
        """Calls in doubt come back to be held for a person (else they end in doubt)."""
        return self.book is not None and self.book.settles_doubt and self.loop.can_park

    async def hold_in_doubt(
        self,
        ran: list[CallDecision],
        by_seq: dict[int, ToolRunOutput],
        assistant_seq: int,
        reruns: dict[int, int] | None = None,
    ) -> set[int]:
        """Hold the calls that came back in doubt; their result seqs. Parks the loop if any."""
        doubted = [
            (d, by_seq[d.result_seq], (reruns or {}).get(d.result_seq, 0))
            for d in ran
            if d.result_seq in by_seq and by_seq[d.result_seq].in_doubt
        ]
        if not doubted or self.book is None:
            return set()
        held = await self.book.hold_in_doubt(
            doubted,
            message_id=self.loop.result.message_id,
            turn=self.loop.turn(),
            assistant_seq=assistant_seq,
        )
        self._park(held)
        return {p.result_seq for p in held}

    def timed_out_in_doubt(self, decision: CallDecision, why: str) -> ToolRunOutput:
        """The last attempt of an ``effect="once"`` call timed out (its worker died inside
        the body, say): whether its effect happened is unknown, so the call is in doubt."""
        name = decision.call.name
        return ToolRunOutput(
            result_seq=decision.result_seq,
            call_id=decision.call.id,
            name=name,
            ok=False,
            error_codes=[ErrorCode.TOOL_CALL_IN_DOUBT],
            preview=f"whether {name!r} took effect is unknown: its last attempt ended without a "
            f"result ({why}) and it was not run again, so it is not done twice.",
            in_doubt=True,
        )

    def _park(self, held: list[PendingToolCall]) -> None:
        loop = self.loop
        if held and self.parked is not None:
            self.parked.held += held
        elif held:
            self.parked = ParkedMessage(
                message_id=loop.result.message_id,
                result=loop.result,
                held=held,
                seen_calls=loop.seen_calls,
                last_ok_by_tool=loop.last_ok_by_tool,
                tools_off=loop.tools_off,
                **loop.reply_guard.parked(),
                fallbacks_left=loop.fallbacks_left,
                output_schema=loop.typed.schema if loop.typed else None,
                output_retries_used=loop.typed.used if loop.typed else None,
            )

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
        loop.reply_guard.resume(parked)
        loop.fallbacks_left = parked.fallbacks_left
        loop.typed = TypedAnswer.resumed(parked, loop.settings)
        decisions: list[CallDecision] = []
        approved: dict[int, ToolCallDecided] = {}
        answered: dict[int, ToolRunOutput] = {}
        for held in parked.held:
            decided = self.book.outcome(held)
            decisions.append(call_decision(held, decided))
            approved[held.result_seq] = decided
            if decided.status == "happened":
                answered[held.result_seq] = self._happened(held, decided)
        to_run = [d for d in decisions if d.action == "execute" and d.result_seq not in answered]
        assistant_seq = parked.held[0].assistant_seq
        by_seq = await loop._execute_all(assistant_seq, to_run, approved)
        reruns = {seq: d.rerun for seq, d in approved.items()}
        doubted = await self.hold_in_doubt(to_run, by_seq, assistant_seq, reruns)
        by_seq |= answered
        for decision in decisions:
            if decision.result_seq not in doubted:
                loop._record(decision, by_seq.get(decision.result_seq))

    def _happened(self, held: PendingToolCall, decided: ToolCallDecided) -> ToolRunOutput:
        """Store the person's answer as the call's result (the workflow writes it)."""
        envelope = happened_result(held, decided)
        self.loop.appends.append(
            AppendItem(
                seq=held.result_seq,
                message=Message.tool_result(held.call_id, held.tool, envelope),
            )
        )
        return ToolRunOutput(
            result_seq=held.result_seq,
            call_id=held.call_id,
            name=held.tool,
            ok=True,
            preview=envelope.to_content(),
        )
