"""The session workflow: one long-lived workflow per chat session (``session-<id>``).

Messages arrive by Update (the caller gets the reply) or Signal (fire and forget) and are
processed one at a time by :class:`MessageLoop`. Between messages the workflow continues
as new once its history grows past the configured bound, carrying only counters, the
queue and a short transcript tail: the transcript itself lives in the store.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Literal

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from durable_loop.core import names
    from durable_loop.core.activity_contracts import ListToolsInput
    from durable_loop.core.activity_refs import LIST_TOOLS
    from durable_loop.core.approvals import UPDATE_MESSAGE_RESULT, MessageResultRequest
    from durable_loop.core.budget import budget_of
    from durable_loop.core.config import LoopStrategy
    from durable_loop.core.contracts import (
        CarriedState,
        CloseRequest,
        ParkedMessage,
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
    from durable_loop.core.errors import ErrorCode
    from durable_loop.core.messages import Usage
    from durable_loop.core.settings_digest import not_applied, settings_digest
    from durable_loop.core.tools import ToolCatalog

from durable_loop.workflows.activity_calls import run_local_activity
from durable_loop.workflows.approval_handlers import ApprovalHandlers
from durable_loop.workflows.approvals import ApprovalBook
from durable_loop.workflows.budget import BudgetHandlers
from durable_loop.workflows.message_bodies import MessageBodies
from durable_loop.workflows.model_routing import switch_result, switched_settings, validate_switch
from durable_loop.workflows.proposals import ProposalBook, ProposalHandlers
from durable_loop.workflows.refusals import refuse
from durable_loop.workflows.router_pipeline import RouterPipeline
from durable_loop.workflows.run_control import RunControl
from durable_loop.workflows.run_start_patches import ask_patches_at_run_start
from durable_loop.workflows.session_cancel import CancelHandlers
from durable_loop.workflows.session_cursor import SessionCursor
from durable_loop.workflows.session_upgrade import SessionUpgrade
from durable_loop.workflows.sub_agent_children import SubAgentChildren, SubAgentHandlers
from durable_loop.workflows.tool_loop import MessageLoop
from durable_loop.workflows.typed_answers import (
    TypedAnswer,
    admitted_schema,
    output_schema_refusal,
    schema_refused_result,
)
from durable_loop.workflows.visibility import SessionVisibility, VisibleState

RECENT_RESULTS_KEPT = 32


@workflow.defn(name=names.SESSION_WORKFLOW)
class SessionWorkflow(
    ProposalHandlers,
    ApprovalHandlers,
    BudgetHandlers,
    SubAgentHandlers,
    CancelHandlers,
    SessionUpgrade,
):
    """Pinned on a versioned worker (its default behaviour, :mod:`durable_loop.worker.
    versioning`; not declared here, because a server refuses a declared behaviour from an
    unversioned worker): a run only ever executes the build it started on, so a new build never
    replays a run it did not record, and a change to the workflow code needs no patch for
    it. Sessions live for months, so pinning alone would keep every old build up forever:
    a run moves to the deployment's new target version by continuing as new at its next
    safe point (:meth:`_moves_to_new_build`), idle ones too (:meth:`_wait_for_work`).
    On an unversioned worker nothing of this applies."""

    @workflow.init
    def __init__(self, inp: SessionInput) -> None:
        carried = inp.carried or CarriedState(
            next_seq=0, turn_index=0, messages_done=0, run_index=0, usage=Usage()
        )
        self._session_id = inp.session_id
        self._settings = inp.settings
        self._cursor = SessionCursor(carried.next_seq, carried.turn_index, carried.usage)
        self._cursor.tail = list(carried.tail)
        self._cursor.dedup = dict(carried.dedup)
        self._cursor.breaker = carried.breaker
        self._messages_done = carried.messages_done
        self._run_index = carried.run_index
        self._queue: list[UserMessage] = list(carried.queue)
        self._results: dict[str, RunResult] = {r.message_id: r for r in carried.recent_results}
        self._bodies = MessageBodies(carried.message_digests)
        for queued in self._queue:
            if queued.message_id:
                self._bodies.remember(queued.message_id, queued.text)
        self._in_progress: str | None = None
        self._closing: str | None = None
        self._control = RunControl()
        self._children = SubAgentChildren()
        self._proposals = ProposalBook(inp.session_id, inp.settings.workspace, carried.proposals)
        self._approvals = ApprovalBook(inp.session_id, inp.settings, carried.approvals)
        self._parked: ParkedMessage | None = carried.parked
        if carried.parked is not None:
            self._approvals.unread = {p.call_id for p in carried.parked.held}
        self._running: MessageLoop | None = None
        self._ended = False
        """The run returned: a Query of the closed workflow says ``closed``."""
        self._visibility = SessionVisibility(inp.settings.search_attributes, self._visible_state)

    @workflow.run
    async def run(self, inp: SessionInput) -> SessionEnd:
        ask_patches_at_run_start()
        self._control.start()
        self._proposals.start()
        self._approvals.start()
        self._visibility_task = asyncio.create_task(self._visibility.keep_current())
        catalog = await self._load_catalog()
        self._approvals.specs = catalog.by_name()
        while True:
            await self._wait_for_work(inp)
            if self._closing is not None and self._parked is not None and not self._resumable():
                await self._approvals.close_held(self._parked.held)
            if self._resumable():
                assert self._parked is not None
                reason = self._control.parked_reason
                if reason is not None:  # cancelled while parked: its held calls never run
                    await self._approvals.cancel_held(self._parked.held, reason)
                parked, self._parked = self._parked, None
                self._in_progress = parked.message_id
                self._control.begin(parked.message_id)
                if reason is not None:
                    self._control.parked_reason = None
                    self._control.cancel_running(reason)
                loop = self._loop(catalog, parked.message_id)
                await self._after(loop, await loop.resume(parked), inp)
                continue
            if not self._takes_message():
                await workflow.wait_condition(workflow.all_handlers_finished)
                self._visibility.finish()
                self._ended = True
                return SessionEnd(
                    session_id=self._session_id,
                    reason=self._closing or "closed",
                    messages_done=self._messages_done,
                    turns_total=self._cursor.turn_index,
                )
            message = self._queue.pop(0)
            message_id = message.message_id or str(workflow.uuid4())
            self._in_progress = message_id
            self._control.begin(message_id)
            loop = self._loop(catalog, message_id)
            loop.typed = TypedAnswer.for_message(message.output_schema, self._settings)
            await self._after(loop, await loop.run(message.text), inp)

    def _loop(self, catalog: ToolCatalog, message_id: str) -> MessageLoop:
        strategy = self._settings.runtime.loop_strategy
        loop_class = RouterPipeline if strategy is LoopStrategy.ROUTER else MessageLoop
        self._running = loop_class(
            session_id=self._session_id,
            settings=self._settings,
            catalog=catalog,
            cursor=self._cursor,
            message_id=message_id,
            proposals=self._proposals,
            approvals=self._approvals,
            control=self._control,
            children=self._children,
        )
        return self._running

    def _takes_message(self) -> bool:
        return bool(self._queue) and self._parked is None

    def _resumable(self) -> bool:
        parked = self._parked
        if parked is None:
            return False
        return self._control.parked_reason is not None or self._approvals.all_decided(parked.held)

    async def _after(self, loop: MessageLoop, result: RunResult, inp: SessionInput) -> None:
        """Keep a message's result (final, or awaiting approval) and continue as new if due.
        A cancel accepted as the message parked on held calls cancels the parked message
        (``cancel-parked`` patch; before it, the cancel answered with the interim result)."""
        self._in_progress = None
        self._running = None
        self._parked = loop.held.parked
        reason = self._control.reason
        ended = self._control.end(result)
        if self._parked is not None and reason is not None and self._control.cancels_parked:
            self._control.parked_reason = reason  # cancelled as it parked: settle it now
        if self._parked is None:
            result = ended
            self._messages_done += 1
        self._keep_result(result)
        if self._should_continue_as_new():
            # Updates for queued messages wait on this loop, so waiting for every
            # handler to finish while messages are queued would deadlock: drain the
            # queue first and continue as new once it is empty and handlers are done.
            # A parked message resumes once decided, also before continuing as new.
            await workflow.wait_condition(
                lambda: (
                    workflow.all_handlers_finished()
                    or self._takes_message()
                    or self._resumable()
                    or self._closing is not None
                )
            )
            if (
                not self._queue
                and self._closing is None
                and not self._resumable()
                and workflow.all_handlers_finished()
            ):
                self._continue_as_new(inp)

    async def _load_catalog(self) -> ToolCatalog:
        out = await run_local_activity(
            LIST_TOOLS,
            ListToolsInput(session_id=self._session_id),
            start_to_close_timeout=timedelta(seconds=30),
        )
        self._children.configs = {c.name: c for c in out.sub_agents}
        return out.catalog

    def _keep_result(self, result: RunResult) -> None:
        self._results[result.message_id] = result
        while len(self._results) > RECENT_RESULTS_KEPT:
            self._results.pop(next(iter(self._results)))
        self._bodies.retain([*self._results, *self._queued_ids()])

    # ------------------------------------------------------------------ handlers

    @workflow.update(name=names.UPDATE_SEND_MESSAGE)
    async def send_message(self, message: UserMessage) -> RunResult:
        info = workflow.current_update_info()
        message_id = message.message_id or (info.id if info else str(workflow.uuid4()))
        ignored = not_applied(message.settings_digest, self._settings)
        self._enqueue(message, message_id)
        final_only = message.wait_for_approval
        await workflow.wait_condition(lambda: self._answer(message_id, final_only) is not None)
        result = self._answer(message_id, final_only)
        assert result is not None
        return result.model_copy(update={"settings_not_applied": ignored}) if ignored else result

    def _has_result(self, message_id: str, final_only: bool) -> bool:
        result = self._results.get(message_id)
        return result is not None and not (final_only and result.status == "awaiting_approval")

    def _answer(self, message_id: str, final_only: bool) -> RunResult | None:
        """The message's result, or (unless ``final_only``) ``awaiting_approval`` while the
        running message waits on calls its sub-agents hold."""
        if self._has_result(message_id, final_only):
            return self._results[message_id]
        waiting = self._children.waiting()
        if final_only or not waiting or self._running is None:
            return None
        if message_id != self._in_progress:
            return None
        update = {"status": "awaiting_approval", "pending_approvals": waiting}
        return self._running.result.model_copy(update=update, deep=True)

    @workflow.update(name=UPDATE_MESSAGE_RESULT)
    async def message_result(self, request: MessageResultRequest) -> RunResult:
        """The final result of a message sent earlier (after its held calls were decided)."""
        await workflow.wait_condition(lambda: self._has_result(request.message_id, True))
        return self._results[request.message_id]

    @message_result.validator
    def _validate_message_result(self, request: MessageResultRequest) -> None:
        if request.message_id not in self._results and not self._is_pending(request.message_id):
            raise refuse(ErrorCode.UNKNOWN_MESSAGE, f"no message {request.message_id!r}")

    @send_message.validator
    def _validate_send(self, message: UserMessage) -> None:
        if self._closing is not None:
            raise refuse(ErrorCode.SESSION_CLOSED, "the session is closing and takes no messages")
        if message.message_id and self._bodies.reused(message.message_id, message.text):
            raise refuse(
                ErrorCode.IDEMPOTENCY_KEY_REUSED,
                "this message id (idempotency key) was already sent with another text; "
                "send a new message under a new id",
            )
        problem = output_schema_refusal(message, self._settings)
        if problem is not None:
            raise refuse(ErrorCode.INVALID_SETTING, problem)

    @workflow.update(name=names.UPDATE_SWITCH_MODEL)
    def switch_model(self, request: SwitchModelRequest) -> SwitchModelResult:
        """Use another model (and fallback chain) from the next message on."""
        before, self._settings = self._settings, switched_settings(self._settings, request)
        return switch_result(before, self._settings)

    @switch_model.validator
    def _validate_switch(self, request: SwitchModelRequest) -> None:
        validate_switch(self._settings, request)

    @workflow.signal(name=names.SIGNAL_POST_MESSAGE)
    def post_message(self, message: UserMessage) -> None:
        message_id = message.message_id or str(workflow.uuid4())
        problem = output_schema_refusal(message, self._settings)
        if problem is not None:
            if message_id not in self._results and not self._is_pending(message_id):
                self._keep_result(schema_refused_result(message_id, problem))
            return
        self._enqueue(message, message_id)

    def _enqueue(self, message: UserMessage, message_id: str) -> None:
        """Queue a new message (a resent id is not queued again); with ``interrupt`` it goes
        first and the running message is cancelled."""
        if message_id in self._results or self._is_pending(message_id):
            return
        queued = UserMessage(
            text=message.text, message_id=message_id, output_schema=admitted_schema(message)
        )
        if message.interrupt:
            self._queue.insert(0, queued)
            self._control.cancel_running("interrupted by a new message")
        else:
            self._queue.append(queued)
        self._bodies.remember(message_id, message.text)

    @workflow.signal(name=names.SIGNAL_CLOSE)
    def close(self, request: CloseRequest) -> None:
        self._closing = request.reason

    def _queued_ids(self) -> list[str]:
        return [m.message_id for m in self._queue if m.message_id]

    @property
    def message_in_progress(self) -> str | None:
        """The id of the message being answered (read by the worker's tracing)."""
        return self._in_progress

    def _is_pending(self, message_id: str) -> bool:
        return self._in_progress == message_id or any(
            m.message_id == message_id for m in self._queue
        )

    def _state(self) -> Literal["idle", "running", "awaiting_approval", "closing", "closed"]:
        if self._ended:
            return "closed"
        if self._in_progress:
            return "awaiting_approval" if self._children.waiting() else "running"
        if self._parked is not None:
            return "awaiting_approval"
        return "closing" if self._closing else "idle"

    def _visible_state(self) -> VisibleState:
        return VisibleState(
            status=self._state(),
            model=self._settings.llm.model,
            pending_proposals=len(self._proposals.pending)
            + len(self._approvals.pending)
            + len(self._children.waiting()),
            turns=self._cursor.turn_index,
            total_tokens=self._cursor.usage.total_tokens,
        )

    @workflow.query(name=names.QUERY_STATUS)
    def status(self) -> SessionStatus:
        last = next(reversed(self._results.values()), None) if self._results else None
        return SessionStatus(
            session_id=self._session_id,
            state=self._state(),
            model=self._settings.llm.model,
            messages_done=self._messages_done,
            turns_total=self._cursor.turn_index,
            queued_messages=len(self._queue),
            next_seq=self._cursor.next_seq,
            run_index=self._run_index,
            usage=self._cursor.usage,
            last_result=last,
            budget=budget_of(self._settings.runtime),
            settings_digest=settings_digest(self._settings),
        )

    @workflow.query(name=names.QUERY_TAIL)
    def transcript_tail(self, request: TailRequest) -> TranscriptTail:
        return TranscriptTail(entries=self._cursor.tail[-request.limit :])
