"""Cancelling a message of the session: the ``cancel_message`` Update and its Signal form.

Mixed into :class:`~durable_loop.workflows.session.SessionWorkflow`. The running message is
cancelled through :class:`~durable_loop.workflows.run_control.RunControl`, a parked one
settles when the session resumes it (``cancel-parked``), a queued one leaves the queue
with a cancelled result at once.
"""

from __future__ import annotations

from collections.abc import Callable

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from durable_loop.core import names
    from durable_loop.core.contracts import (
        CancelMessageRequest,
        ParkedMessage,
        RunResult,
        UserMessage,
    )
    from durable_loop.core.errors import ErrorCode

from durable_loop.workflows.refusals import refuse
from durable_loop.workflows.run_control import CANCEL_ANSWERS_FINAL, RunControl, cancelled


class CancelHandlers:
    """Cancel a running, parked or queued message; answer with its result."""

    _control: RunControl
    _queue: list[UserMessage]
    _results: dict[str, RunResult]
    _in_progress: str | None
    _parked: ParkedMessage | None
    _keep_result: Callable[[RunResult], None]

    @workflow.update(name=names.UPDATE_CANCEL_MESSAGE)
    async def cancel_message(self, request: CancelMessageRequest) -> RunResult:
        """Cancel the running message (or a queued one); answers with its RunResult."""
        final = workflow.patched(CANCEL_ANSWERS_FINAL)
        message_id = self._cancel(request)
        await workflow.wait_condition(lambda: self._settled(message_id, final=final))
        return self._results[message_id]

    def _settled(self, message_id: str, *, final: bool) -> bool:
        """Whether ``message_id`` has the result a cancel answers with: since the
        ``cancel-answers-final`` patch, not the interim one a parked message kept (a cancel
        accepted right after a decision resumed it answered ``awaiting_approval``)."""
        result = self._results.get(message_id)
        if result is None:
            return False
        return not (final and result.status == "awaiting_approval")

    @cancel_message.validator
    def _validate_cancel(self, request: CancelMessageRequest) -> None:
        refusal = self._cancel_refusal(request)
        if refusal is not None:
            raise refuse(*refusal)

    @workflow.signal(name=names.SIGNAL_CANCEL_MESSAGE)
    def request_cancel(self, request: CancelMessageRequest) -> None:
        """The Signal form of ``cancel_message``: a request it would refuse is ignored."""
        if self._cancel_refusal(request) is None:
            self._cancel(request)

    def _cancel_refusal(self, request: CancelMessageRequest) -> tuple[ErrorCode, str] | None:
        queued = (m.message_id for m in self._queue)
        return self._control.refusal(request, queued, self._results, self._parked_id())

    def _parked_id(self) -> str | None:
        return self._parked.message_id if self._parked is not None else None

    def _cancel(self, request: CancelMessageRequest) -> str:
        message_id = self._control.target(request, self._parked_id())
        assert message_id is not None  # refused otherwise
        if message_id == self._in_progress:
            self._control.cancel_running(request.reason)
        elif self._control.cancels_parked and message_id == self._parked_id():
            self._control.parked_reason = request.reason
        else:
            self._queue = [m for m in self._queue if m.message_id != message_id]
            result = RunResult(message_id=message_id, status="completed")
            self._keep_result(cancelled(result, request.reason))
        return message_id
