"""Run control: stop one message (``cancel_message``) or steer (a send with ``interrupt``).

The session holds one :class:`RunControl`. The message loop awaits its LLM and tool
activities through :meth:`RunControl.guard`; when a cancel is accepted, the guard cancels
the activity and waits until it has stopped (``WAIT_CANCELLATION_COMPLETED``), so a call
that finishes anyway keeps its result. The activities heartbeat, which is how the cancel
reaches them. The loop then pairs every started call with a ``TOOL_CALL_CANCELLED``
result, notes the cut in the transcript, and ends with status ``cancelled``.

Guarding is new workflow behaviour, so it runs behind the ``cancel-message`` patch, asked
once as a run starts (asked later, right after a local activity, a replay can ask it one
workflow task earlier than the run did): the messages of a run that started before the
patch are cancelled only between their activities.

A message parked on held calls can be cancelled too (``cancel-parked`` patch, asked as a
run starts): the session then settles its held calls as cancelled (they never run) and
resumes it, so it ends ``cancelled`` with every call paired with ``TOOL_CALL_CANCELLED``.
Deterministic workflow code.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterable, Mapping
from typing import Any, TypeVar

from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from durable_loop.core.contracts import CancelMessageRequest, RunResult
    from durable_loop.core.errors import CodedError, ErrorCode

PATCH_ID = "cancel-message"
PARKED_PATCH_ID = "cancel-parked"
CANCEL_ANSWERS_FINAL = "cancel-answers-final"
"""Patch: ``cancel_message`` answers with the message's final result, never the interim
``awaiting_approval`` one it kept while parked."""
CANCELLED_NOTE = (
    "[The user stopped the previous request before it finished ({reason}); "
    "anything above that is cut off is incomplete.]"
)
"""Appended (as a synthetic user message) after a cancelled message's partial turn."""

T = TypeVar("T")
Refusal = tuple[ErrorCode, str]


class MessageCancelled(Exception):
    """A guarded call gave no result because its message was cancelled."""


GENERIC_REASONS = frozenset({"", "cancelled", "canceled"})
"""Reasons that say no more than the code: the default of ``cancel`` and the CLI."""


def cancelled_text(reason: str) -> str:
    """The MESSAGE_CANCELLED message: the reason once, never ``cancelled: cancelled``."""
    reason = " ".join(reason.split())
    if reason.lower() in GENERIC_REASONS:
        return "the message was cancelled"
    return f"the message was cancelled: {reason}"


def cancelled(result: RunResult, reason: str) -> RunResult:
    """``result`` ended as cancelled (whatever it held so far stays)."""
    error = CodedError(code=ErrorCode.MESSAGE_CANCELLED, message=cancelled_text(reason))
    return result.model_copy(update={"status": "cancelled", "error": error})


class RunControl:
    """Which message runs, and whether (and why) it is being cancelled."""

    def __init__(self) -> None:
        self.running: str | None = None
        self.reason: str | None = None
        self.guarding = False
        self.cancels_parked = False
        self.parked_reason: str | None = None
        """A cancel accepted for the parked message, not yet carried out."""

    # ------------------------------------------------------------------ the loop's side

    def start(self) -> None:
        """Call first thing in the run."""
        self.guarding = workflow.patched(PATCH_ID)
        self.cancels_parked = workflow.patched(PARKED_PATCH_ID)

    def begin(self, message_id: str) -> None:
        self.running, self.reason = message_id, None

    def end(self, result: RunResult) -> RunResult:
        """The message's result, cancelled if a cancel was accepted (also when a loop
        finished anyway: a reply that arrived after the cancel)."""
        reason, self.running, self.reason = self.reason, None, None
        if reason is None or result.status == "cancelled":
            return result
        return cancelled(result, reason)

    async def guard(self, call: Coroutine[Any, Any, T]) -> T:
        """Await an activity call; cancel it when the message is cancelled. Returns its
        result, also one that arrived after the cancel; raises :class:`MessageCancelled`
        when a cancelled call gave none, or when the message was cancelled before it."""
        if self.reason is not None:
            call.close()
            raise MessageCancelled
        if not self.guarding:
            return await call
        task = asyncio.create_task(call)
        try:
            await workflow.wait_condition(lambda: task.done() or self.reason is not None)
        except asyncio.CancelledError:  # the session itself is cancelled: so is the call
            task.cancel()
            await workflow.wait([task])
            raise
        if not task.done():
            task.cancel()
        try:
            return await task
        except (ActivityError, asyncio.CancelledError):
            if self.reason is None:
                raise
            raise MessageCancelled from None

    # ------------------------------------------------------------------ the handlers' side

    def target(self, request: CancelMessageRequest, parked: str | None = None) -> str | None:
        if not self.cancels_parked:
            parked = None
        return request.message_id or self.running or parked

    def refusal(
        self,
        request: CancelMessageRequest,
        queued: Iterable[str | None],
        finished: Mapping[str, RunResult],
        parked: str | None = None,
    ) -> Refusal | None:
        """Why ``request`` cannot be honoured, or None. Nothing changes on a refusal."""
        message_id = self.target(request, parked)
        if message_id is None:
            return ErrorCode.NOTHING_RUNNING, "no message is running"
        if message_id == self.running:
            if self.reason is not None:
                return ErrorCode.ALREADY_CANCELLED, f"message {message_id!r} is being cancelled"
            return None
        if self.cancels_parked and message_id == parked:
            if self.parked_reason is not None:
                return ErrorCode.ALREADY_CANCELLED, f"message {message_id!r} is being cancelled"
            return None
        if message_id in queued:
            return None
        done = finished.get(message_id)
        if done is None:
            return ErrorCode.UNKNOWN_MESSAGE, f"this session has no message {message_id!r}"
        if done.status == "cancelled":
            return ErrorCode.ALREADY_CANCELLED, f"message {message_id!r} was cancelled"
        return ErrorCode.MESSAGE_FINISHED, f"message {message_id!r} has finished ({done.status})"

    def cancel_running(self, reason: str) -> None:
        if self.running is not None and self.reason is None:
            self.reason = reason
