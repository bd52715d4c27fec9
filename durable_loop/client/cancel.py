"""Cancelling a session's queued or running message from outside the workflow (the
``cancel_message`` Update, or its Signal)."""

from __future__ import annotations

from temporalio.client import Client, WorkflowHandle

from durable_loop.core import names
from durable_loop.core.contracts import CancelMessageRequest, RunResult


class CancelClient:
    def __init__(self, client: Client) -> None:
        self.client = client

    def handle(self, session_id: str) -> WorkflowHandle:
        return self.client.get_workflow_handle(names.session_workflow_id(session_id))

    async def cancel(
        self, session_id: str, message_id: str | None = None, *, reason: str = "cancelled"
    ) -> RunResult:
        """Cancel the running message (or the queued or running ``message_id``) and wait for
        its RunResult (status ``cancelled``). Refused, with nothing changed, while idle
        (``NOTHING_RUNNING``), for an unknown (``UNKNOWN_MESSAGE``) or finished
        (``MESSAGE_FINISHED``) message and twice (``ALREADY_CANCELLED``): see
        :func:`durable_loop.client.refusals.refusal_of`."""
        return await self.handle(session_id).execute_update(
            names.UPDATE_CANCEL_MESSAGE,
            CancelMessageRequest(message_id=message_id, reason=reason),
            result_type=RunResult,
        )

    async def post_cancel(
        self, session_id: str, message_id: str | None = None, *, reason: str = "cancelled"
    ) -> None:
        """The Signal form of :meth:`cancel`: no answer, and a request it would refuse is
        ignored."""
        await self.handle(session_id).signal(
            names.SIGNAL_CANCEL_MESSAGE, CancelMessageRequest(message_id=message_id, reason=reason)
        )
