"""A typed client for services: start sessions, send messages, read status."""

from __future__ import annotations

from temporalio.client import Client, WithStartWorkflowOperation, WorkflowHandle
from temporalio.common import WorkflowIDConflictPolicy

from durable_loop.toolcalling import names
from durable_loop.toolcalling.config import SessionSettings
from durable_loop.toolcalling.contracts import (
    CloseRequest,
    RunResult,
    SessionEnd,
    SessionInput,
    SessionStatus,
    TailRequest,
    TranscriptTail,
    UserMessage,
)
from durable_loop.workers.constants import TASK_QUEUE


class SessionClient:
    def __init__(self, client: Client, *, task_queue: str = TASK_QUEUE) -> None:
        self.client = client
        self.task_queue = task_queue
        self.started_workflow_ids: set[str] = set()
        """Workflow ids this client started or joined (tests replay their histories)."""

    def handle(self, session_id: str) -> WorkflowHandle:
        return self.client.get_workflow_handle(names.session_workflow_id(session_id))

    async def start(self, session_id: str, settings: SessionSettings) -> WorkflowHandle:
        """Start the session, or return the running one with the same id."""
        self.started_workflow_ids.add(names.session_workflow_id(session_id))
        return await self.client.start_workflow(
            names.SESSION_WORKFLOW,
            SessionInput(session_id=session_id, settings=settings),
            id=names.session_workflow_id(session_id),
            task_queue=self.task_queue,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            result_type=SessionEnd,
        )

    async def send(self, session_id: str, text: str, *, message_id: str | None = None) -> RunResult:
        """Send a message to a running session and wait for the reply."""
        return await self.handle(session_id).execute_update(
            names.UPDATE_SEND_MESSAGE,
            UserMessage(text=text, message_id=message_id),
            id=message_id,
            result_type=RunResult,
        )

    async def start_and_send(
        self,
        session_id: str,
        settings: SessionSettings,
        text: str,
        *,
        message_id: str | None = None,
    ) -> RunResult:
        """Update-with-start: one call that creates the session if needed and sends."""
        self.started_workflow_ids.add(names.session_workflow_id(session_id))
        start: WithStartWorkflowOperation[SessionInput, SessionEnd] = WithStartWorkflowOperation(
            names.SESSION_WORKFLOW,
            SessionInput(session_id=session_id, settings=settings),
            id=names.session_workflow_id(session_id),
            task_queue=self.task_queue,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        )
        return await self.client.execute_update_with_start_workflow(
            names.UPDATE_SEND_MESSAGE,
            UserMessage(text=text, message_id=message_id),
            start_workflow_operation=start,
            id=message_id,
            result_type=RunResult,
        )

    async def post(self, session_id: str, text: str, *, message_id: str | None = None) -> None:
        await self.handle(session_id).signal(
            names.SIGNAL_POST_MESSAGE, UserMessage(text=text, message_id=message_id)
        )

    async def status(self, session_id: str) -> SessionStatus:
        return await self.handle(session_id).query(names.QUERY_STATUS, result_type=SessionStatus)

    async def tail(self, session_id: str, limit: int = 20) -> TranscriptTail:
        return await self.handle(session_id).query(
            names.QUERY_TAIL, TailRequest(limit=limit), result_type=TranscriptTail
        )

    async def close(self, session_id: str, reason: str = "closed") -> None:
        await self.handle(session_id).signal(names.SIGNAL_CLOSE, CloseRequest(reason=reason))
