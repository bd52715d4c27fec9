"""A typed client for services: start sessions, send messages, read status."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any

from pydantic import JsonValue
from temporalio.client import Client, WithStartWorkflowOperation, WorkflowHandle
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError

from durable_loop.client.progress import Progress, follow_message
from durable_loop.client.proposals import ProposalClient
from durable_loop.client.search_attributes import registered
from durable_loop.client.streaming import (
    StreamEvent,
    send_streaming,
)
from durable_loop.client.tool_approvals import ToolApprovalClient
from durable_loop.client.trace.arguments import ARGS_CHARS
from durable_loop.client.trace.fetch import load_trace
from durable_loop.client.trace.models import Trace
from durable_loop.client.trace.replies import REPLY_CHARS
from durable_loop.client.tracing import end_message_span, message_span
from durable_loop.client.typed_output import message_schema
from durable_loop.client.update_retry import message_update_id, new_message_id, until_admitted
from durable_loop.client.workspace import session_workspace_id
from durable_loop.core import names
from durable_loop.core.approvals import ToolApprovalList, ToolCallDecided, ToolCallDecision
from durable_loop.core.budget import BudgetChange, BudgetChangeResult
from durable_loop.core.catalog import refuse_unreliable_enforced
from durable_loop.core.config import SessionSettings
from durable_loop.core.constants import TASK_QUEUE
from durable_loop.core.contracts import (
    CancelMessageRequest,
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
from durable_loop.core.proposals import (
    DecisionResult,
    PendingProposal,
    ProposalDecision,
    ProposalList,
    Verdict,
)
from durable_loop.core.session_ids import check_session_id
from durable_loop.core.settings_digest import differing, settings_digest
from durable_loop.core.typed_output import OutputSchema
from durable_loop.store.stream import StreamStore
from durable_loop.workflows.visibility import MEMO_SESSION, MEMO_TITLE, PENDING_QUERY


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
        self.approvals = ProposalClient(client)
        self.tool_calls = ToolApprovalClient(client)
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

    async def set_budget(self, session_id: str, change: BudgetChange) -> BudgetChangeResult:
        """Change the running session's budget from its next message on, recorded in the
        audit log with ``change.changed_by``; a change without an author or without
        anything to change is refused (``INVALID_SETTING``) before it enters history."""
        return await self.handle(session_id).execute_update(
            names.UPDATE_SET_BUDGET, change, result_type=BudgetChangeResult
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

    async def status(self, session_id: str) -> SessionStatus:
        return await self.handle(session_id).query(names.QUERY_STATUS, result_type=SessionStatus)

    async def tail(self, session_id: str, limit: int = 20) -> TranscriptTail:
        return await self.handle(session_id).query(
            names.QUERY_TAIL, TailRequest(limit=limit), result_type=TranscriptTail
        )

    async def close(self, session_id: str, reason: str = "closed") -> None:
        await self.handle(session_id).signal(names.SIGNAL_CLOSE, CloseRequest(reason=reason))

    async def send_with_progress(
        self,
        session_id: str,
        text: str,
        *,
        settings: SessionSettings | None = None,
        message_id: str | None = None,
        poll_s: float = 0.25,
        chunks: StreamStore | None = None,
        interrupt: bool = False,
        output_schema: OutputSchema | None = None,
        output_type: type[Any] | None = None,
    ) -> AsyncIterator[Progress]:
        """Send (update-with-start when ``settings`` are given) and yield progress while
        the Update runs, by polling the ``transcript_tail`` and ``proposals`` Queries and,
        with ``chunks`` (the worker's store) and ``stream_replies`` on, the reply text as
        it is generated; the last event carries the ``RunResult``."""
        try:
            seen_seq = (await self.status(session_id)).next_seq - 1
        except RPCError:
            if settings is None:
                raise  # NOT_FOUND: no such session and nothing to start it with
            seen_seq = -1
        seen_proposals = {p.proposal_id for p in await self._pending_or_none(session_id)}
        after_chunk = await chunks.last_id(session_id) if chunks is not None else 0
        typed = message_schema(output_schema, output_type)
        if settings is None:
            call = self.send(
                session_id, text, message_id=message_id, interrupt=interrupt, output_schema=typed
            )
        else:
            call = self.start_and_send(
                session_id,
                settings,
                text,
                message_id=message_id,
                interrupt=interrupt,
                output_schema=typed,
            )
        events = follow_message(
            asyncio.ensure_future(call),
            session_id=session_id,
            tail=lambda: self.tail(session_id, limit=100),
            pending=lambda: self._pending_or_none(session_id),
            seen_seq=seen_seq,
            seen_proposals=seen_proposals,
            chunks=chunks,
            after_chunk=after_chunk,
            poll_s=poll_s,
        )
        async with aclosing(events):
            async for event in events:
                yield event

    async def _pending_or_none(self, session_id: str) -> list[PendingProposal]:
        try:
            return await self.pending_proposals(session_id)
        except RPCError:
            return []  # not started yet (update-with-start)

    # ------------------------------------------------------------------ proposals

    async def proposals(self, session_id: str) -> ProposalList:
        """Pending proposals and recent decisions of one session (Query)."""
        return await self.approvals.proposals(session_id)

    async def pending_proposals(self, session_id: str) -> list[PendingProposal]:
        return (await self.proposals(session_id)).pending

    async def decide(self, session_id: str, decision: ProposalDecision) -> DecisionResult:
        """Update: an unknown, expired, already decided or stale decision is refused
        (``WorkflowUpdateFailedError`` whose cause's ``type`` is the code: see
        :func:`durable_loop.client.refusals.refusal_of`)."""
        return await self.approvals.decide(session_id, decision)

    async def confirm(
        self,
        session_id: str,
        proposal_id: str,
        approver: str,
        *,
        comment: str | None = None,
        fingerprint: str | None = None,
    ) -> DecisionResult:
        """Commit the proposal; bound to ``fingerprint`` (the content the approver saw),
        or to the content pending right now when it is not given."""
        return await self._decide(
            session_id, proposal_id, "confirm", approver, comment, fingerprint
        )

    async def reject(
        self,
        session_id: str,
        proposal_id: str,
        approver: str,
        *,
        comment: str | None = None,
        fingerprint: str | None = None,
    ) -> DecisionResult:
        return await self._decide(session_id, proposal_id, "reject", approver, comment, fingerprint)

    async def _decide(
        self,
        session_id: str,
        proposal_id: str,
        verdict: Verdict,
        approver: str,
        comment: str | None,
        fingerprint: str | None,
    ) -> DecisionResult:
        if fingerprint is None and verdict == "confirm":
            decision = await self.approvals.decision_for(
                session_id, proposal_id, verdict, approver, comment
            )
        else:
            decision = ProposalDecision(
                proposal_id=proposal_id,
                verdict=verdict,
                approver=approver,
                fingerprint=fingerprint,
                comment=comment,
            )
        return await self.decide(session_id, decision)

    # ------------------------------------------------------------------ tool approvals

    async def tool_approvals(self, session_id: str) -> ToolApprovalList:
        """Held tool calls, recent decisions and refused Signal decisions (Query)."""
        return await self.tool_calls.listing(session_id)

    async def decide_tool_call(
        self, session_id: str, decision: ToolCallDecision
    ) -> ToolCallDecided:
        """Update; refusals as for :meth:`decide` (``UNKNOWN_TOOL_CALL``, ``EXPIRED``, ...)."""
        return await self.tool_calls.decide(session_id, decision)

    async def confirm_tool_call(
        self,
        session_id: str,
        call_id: str,
        approver: str,
        *,
        arguments: dict[str, JsonValue] | None = None,
        comment: str | None = None,
        fingerprint: str | None = None,
    ) -> ToolCallDecided:
        """Let the call run, with ``arguments`` instead of the model's if given; bound to
        ``fingerprint`` (what the approver saw), or to the call pending right now."""
        decision = await self.tool_calls.decision_for(
            session_id,
            call_id,
            "confirm",
            approver,
            comment=comment,
            arguments=arguments,
            fingerprint=fingerprint,
        )
        return await self.decide_tool_call(session_id, decision)

    async def reject_tool_call(
        self,
        session_id: str,
        call_id: str,
        approver: str,
        *,
        comment: str | None = None,
        fingerprint: str | None = None,
    ) -> ToolCallDecided:
        """The call does not run; the model reads TOOL_CALL_REJECTED and the comment."""
        decision = await self.tool_calls.decision_for(
            session_id, call_id, "reject", approver, comment=comment, fingerprint=fingerprint
        )
        return await self.decide_tool_call(session_id, decision)

    async def message_result(self, session_id: str, message_id: str) -> RunResult:
        """The final result of a message, once its held tool calls are decided."""
        return await self.tool_calls.message_result(session_id, message_id)

    async def sessions_awaiting_approval(self, limit: int = 200) -> list[str]:
        """Session ids with pending proposals or held tool calls, by the
        ``DurableLoopPendingProposals > 0``
        visibility query (needs the search attributes and a server with visibility: the
        dev server or a cluster; the time-skipping test server raises UNIMPLEMENTED)."""
        found: list[str] = []
        query = f'WorkflowType = "{names.SESSION_WORKFLOW}" AND {PENDING_QUERY}'
        async for execution in self.client.list_workflows(query, limit=limit):
            prefix = names.session_workflow_id("")
            if execution.id.startswith(prefix):
                found.append(execution.id.removeprefix(prefix))
        return found

    async def workspace_id(self, session_id: str) -> str:
        """The session's workspace id, from its start input (no worker needed)."""
        return await session_workspace_id(self.client, session_id)

    # ------------------------------------------------------------------ trace

    async def trace(
        self,
        session_id: str,
        *,
        db_url: str | None = None,
        ui_url: str | None = None,
        args_chars: int | None = ARGS_CHARS,
        reply_chars: int | None = REPLY_CHARS,
    ) -> Trace:
        """Every turn of the session from history (every run) plus, with ``db_url``, the
        transcript store (which also gives each call's arguments, cut at ``args_chars``,
        and each reply whole, cut at ``reply_chars``; None: whole), and the decisions,
        budget changes, cancels and refusals between them."""
        return await load_trace(
            self.client,
            session_id,
            db_url=db_url,
            ui_url=ui_url,
            args_chars=args_chars,
            reply_chars=reply_chars,
        )


async def _registered(client: Client) -> bool:
    try:
        return bool(await registered(client))
    except RPCError:
        return False
