"""A typed client for services: start sessions, send messages, read status."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from temporalio.client import Client, WithStartWorkflowOperation, WorkflowHandle
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError

from durable_loop.client.budget import BudgetClient
from durable_loop.client.cancel import CancelClient
from durable_loop.client.delegation import Delegated
from durable_loop.client.message_progress import MessageProgress
from durable_loop.client.proposal_decisions import ProposalDecisions
from durable_loop.client.search_attributes import registered
from durable_loop.client.session_records import SessionRecords
from durable_loop.client.streaming import (
    StreamEvent,
    send_streaming,
)
from durable_loop.client.tool_call_decisions import ToolCallDecisions
from durable_loop.client.tracing import end_message_span, message_span
from durable_loop.client.typed_output import message_schema
from durable_loop.client.update_retry import message_update_id, new_message_id, until_admitted
from durable_loop.core import names
from durable_loop.core.catalog import refuse_unreliable_enforced
from durable_loop.core.config import SessionSettings
from durable_loop.core.constants import TASK_QUEUE
from durable_loop.core.contracts import (
    CloseRequest,
    RunResult,
    SessionEnd,
    SessionInput,
    SessionStatus,
    SwitchModelRequest,
    SwitchModelResult,
    TailRequest,
    TranscriptTail,
    UserMessage,
)
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.session_ids import check_session_id
from durable_loop.core.settings_digest import differing, settings_digest
from durable_loop.core.typed_output import OutputSchema
from durable_loop.store.stream import StreamStore
from durable_loop.workflows.visibility import MEMO_SESSION, MEMO_TITLE


@dataclass(frozen=True)
class SessionStart:
    """What :meth:`SessionClient.start_or_join` found."""

    handle: WorkflowHandle[Any, SessionEnd]
    started: bool
    settings_not_applied: list[str] = field(default_factory=list)


class SessionClient:
    def __init__(
        self,
        client: Client,
        *,
        task_queue: str = TASK_QUEUE,
        search_attributes: bool | None = None,
    ) -> None:
        self.client = client
        self.task_queue = task_queue
        self.search_attributes = search_attributes
        """Start sessions that keep the DurableLoop* search attributes current; ``None``
        (auto): on if the namespace has them registered (checked once)."""
        self.approvals = ProposalDecisions(client)
        self.tool_calls = ToolCallDecisions(client)
        self.budget = BudgetClient(client)
        self.cancels = CancelClient(client)
        self.records = SessionRecords(client)
        self.progress = MessageProgress(self)
        self.started_workflow_ids: set[str] = set()
        """Workflow ids this client started or joined (tests replay their histories)."""

    def handle(self, session_id: str) -> WorkflowHandle:
        return self.client.get_workflow_handle(names.session_workflow_id(session_id))

    async def start(self, session_id: str, settings: SessionSettings) -> WorkflowHandle:
        """Start the session, or return the running one with the same id (which keeps its
        own settings: :meth:`start_or_join` says which of ``settings`` it did not apply).

        Raises ConfigError for tool_use_mode=enforced on a model marked unreliable."""
        inp, memo = await self._session_input(session_id, settings)
        return await self._start(inp, memo, WorkflowIDConflictPolicy.USE_EXISTING)

    async def start_or_join(self, session_id: str, settings: SessionSettings) -> SessionStart:
        """Like :meth:`start`, and say whether the session was started or already ran, and
        then which of ``settings`` differ from its own (they were not applied)."""
        inp, memo = await self._session_input(session_id, settings)
        try:
            handle = await self._start(inp, memo, WorkflowIDConflictPolicy.FAIL)
        except WorkflowAlreadyStartedError as err:
            handle = self.client.get_workflow_handle(
                names.session_workflow_id(session_id), run_id=err.run_id, result_type=SessionEnd
            )
            running = await self.status(session_id)
            ignored = differing(settings_digest(inp.settings), running.settings_digest)
            return SessionStart(handle=handle, started=False, settings_not_applied=ignored)
        return SessionStart(handle=handle, started=True)

    async def _start(
        self, inp: SessionInput, memo: dict[str, str], policy: WorkflowIDConflictPolicy
    ) -> WorkflowHandle:
        return await self.client.start_workflow(
            names.SESSION_WORKFLOW,
            inp,
            id=names.session_workflow_id(inp.session_id),
            task_queue=self.task_queue,
            id_conflict_policy=policy,
            result_type=SessionEnd,
            memo=memo,
        )

    async def start_and_post(
        self,
        session_id: str,
        settings: SessionSettings,
        text: str,
        *,
        message_id: str | None = None,
    ) -> WorkflowHandle:
        """Signal-with-start: create the session if needed and queue a message without
        waiting for the reply (read it later with :meth:`status` or :meth:`trace`)."""
        inp, memo = await self._session_input(session_id, settings)
        return await self.client.start_workflow(
            names.SESSION_WORKFLOW,
            inp,
            id=names.session_workflow_id(session_id),
            task_queue=self.task_queue,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            result_type=SessionEnd,
            memo=memo,
            start_signal=names.SIGNAL_POST_MESSAGE,
            start_signal_args=[UserMessage(text=text, message_id=message_id)],
        )

    async def _session_input(
        self, session_id: str, settings: SessionSettings
    ) -> tuple[SessionInput, dict[str, str]]:
        check_session_id(session_id)
        refuse_unreliable_enforced(settings)
        if self.search_attributes is None:
            self.search_attributes = await _registered(self.client)
        if self.search_attributes and not settings.search_attributes:
            settings = settings.model_copy(update={"search_attributes": True})
        memo = {MEMO_SESSION: session_id}
        if settings.title:
            memo[MEMO_TITLE] = settings.title
        self.started_workflow_ids.add(names.session_workflow_id(session_id))
        return SessionInput(session_id=session_id, settings=settings), memo

    async def send(
        self,
        session_id: str,
        text: str,
        *,
        message_id: str | None = None,
        wait_for_approval: bool = False,
        interrupt: bool = False,
        output_schema: OutputSchema | None = None,
        output_type: type[Any] | None = None,
    ) -> RunResult:
        """Send a message to a running session and wait for the reply (repeated with the
        same message id while an overloaded server times out admitting it). While tool calls
        of it wait for a person the reply is ``awaiting_approval`` listing them, unless
        ``wait_for_approval``; :meth:`message_result` waits for the final one.
        ``interrupt``: cancel the running message and run this one next.
        ``output_type`` (or a JSON ``output_schema``): the answer is JSON of that type, in
        ``result.output``; ``result.output_as(output_type)`` reads it as one."""
        message_id = message_id or new_message_id()
        message = UserMessage(
            text=text,
            message_id=message_id,
            wait_for_approval=wait_for_approval,
            interrupt=interrupt,
            output_schema=message_schema(output_schema, output_type),
        )
        with message_span(session_id, message_id) as span:
            result = await until_admitted(
                lambda: self.handle(session_id).execute_update(
                    names.UPDATE_SEND_MESSAGE,
                    message,
                    id=message_update_id(message_id, text),
                    result_type=RunResult,
                )
            )
            return end_message_span(span, result)

    async def start_and_send(
        self,
        session_id: str,
        settings: SessionSettings,
        text: str,
        *,
        message_id: str | None = None,
        interrupt: bool = False,
        output_schema: OutputSchema | None = None,
        output_type: type[Any] | None = None,
    ) -> RunResult:
        """Update-with-start: one call that creates the session if needed and sends
        (repeated with the same message id while the server times out admitting it). A
        session that already runs keeps its own settings; the result's
        ``settings_not_applied`` names those of ``settings`` that differ."""
        inp, memo = await self._session_input(session_id, settings)
        message_id = message_id or new_message_id()
        digest = settings_digest(inp.settings)
        schema = message_schema(output_schema, output_type)

        async def attempt() -> RunResult:
            start: WithStartWorkflowOperation[SessionInput, SessionEnd] = (
                WithStartWorkflowOperation(
                    names.SESSION_WORKFLOW,
                    inp,
                    id=names.session_workflow_id(session_id),
                    task_queue=self.task_queue,
                    id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
                    memo=memo,
                )
            )
            return await self.client.execute_update_with_start_workflow(
                names.UPDATE_SEND_MESSAGE,
                UserMessage(
                    text=text,
                    message_id=message_id,
                    settings_digest=digest,
                    interrupt=interrupt,
                    output_schema=schema,
                ),
                start_workflow_operation=start,
                id=message_update_id(message_id, text),
                result_type=RunResult,
            )

        with message_span(session_id, message_id) as span:
            return end_message_span(span, await until_admitted(attempt))

    def send_streaming(
        self,
        session_id: str,
        text: str,
        chunks: StreamStore,
        *,
        message_id: str | None = None,
        poll_s: float | None = None,
        output_schema: OutputSchema | None = None,
        output_type: type[Any] | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """Send a message and yield its assistant text as it is generated, then the
        RunResult (sessions with ``stream_replies``; ``chunks`` reads the worker's store)."""
        return send_streaming(
            self.handle(session_id),
            chunks,
            session_id,
            text,
            message_id=message_id,
            poll_s=poll_s,
            output_schema=message_schema(output_schema, output_type),
        )

    async def switch_model(
        self,
        session_id: str,
        llm: LlmEndpoint,
        *,
        fallback_llms: list[LlmEndpoint] | None = None,
    ) -> SwitchModelResult:
        """Use another model from the next message on (``fallback_llms=None`` keeps the
        chain); the Update is refused before it enters history if the session could not
        run the model (unknown provider, enforced tool use on an unreliable model)."""
        return await self.handle(session_id).execute_update(
            names.UPDATE_SWITCH_MODEL,
            SwitchModelRequest(llm=llm, fallback_llms=fallback_llms),
            result_type=SwitchModelResult,
        )

    async def post(
        self,
        session_id: str,
        text: str,
        *,
        message_id: str | None = None,
        interrupt: bool = False,
        output_schema: OutputSchema | None = None,
        output_type: type[Any] | None = None,
    ) -> None:
        schema = message_schema(output_schema, output_type)
        await self.handle(session_id).signal(
            names.SIGNAL_POST_MESSAGE,
            UserMessage(
                text=text, message_id=message_id, interrupt=interrupt, output_schema=schema
            ),
        )

    async def status(self, session_id: str) -> SessionStatus:
        return await self.handle(session_id).query(names.QUERY_STATUS, result_type=SessionStatus)

    async def tail(self, session_id: str, limit: int = 20) -> TranscriptTail:
        return await self.handle(session_id).query(
            names.QUERY_TAIL, TailRequest(limit=limit), result_type=TranscriptTail
        )

    async def close(self, session_id: str, reason: str = "closed") -> None:
        await self.handle(session_id).signal(names.SIGNAL_CLOSE, CloseRequest(reason=reason))

    # ------------------------------------------------------------------ small clients
    # their methods, under the names services call on the session client

    proposals = Delegated(
        "approvals",
        ProposalDecisions.proposals,
        doc="Pending proposals and recent decisions of one session (Query).",
    )
    pending_proposals = Delegated("approvals", ProposalDecisions.pending_proposals)
    decide = Delegated("approvals", ProposalDecisions.decide)
    confirm = Delegated("approvals", ProposalDecisions.confirm)
    reject = Delegated("approvals", ProposalDecisions.reject)
    tool_approvals = Delegated(
        "tool_calls",
        ToolCallDecisions.listing,
        doc="Held tool calls, recent decisions and refused Signal decisions (Query).",
    )
    decide_tool_call = Delegated("tool_calls", ToolCallDecisions.decide)
    confirm_tool_call = Delegated("tool_calls", ToolCallDecisions.confirm)
    reject_tool_call = Delegated("tool_calls", ToolCallDecisions.reject)
    message_result = Delegated("tool_calls", ToolCallDecisions.message_result)
    set_budget = Delegated("budget", BudgetClient.set_budget)
    cancel = Delegated("cancels", CancelClient.cancel)
    post_cancel = Delegated("cancels", CancelClient.post_cancel)
    send_with_progress = Delegated("progress", MessageProgress.send_with_progress)
    trace = Delegated("records", SessionRecords.trace)
    workspace_id = Delegated("records", SessionRecords.workspace_id)
    sessions_awaiting_approval = Delegated("records", SessionRecords.sessions_awaiting_approval)


async def _registered(client: Client) -> bool:
    try:
        return bool(await registered(client))
    except RPCError:
        return False
