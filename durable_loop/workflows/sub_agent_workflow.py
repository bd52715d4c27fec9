"""The workflow a sub-agent call runs as: a child session that knows its depth and tells
its parent about the tool calls it holds for a person (see ``sub_agent_children``)."""

from __future__ import annotations

import asyncio

from temporalio import workflow
from temporalio.exceptions import FailureError

with workflow.unsafe.imports_passed_through():
    from durable_loop.core.contracts import CancelMessageRequest, ChildSessionResult
    from durable_loop.core.sub_agents import (
        SIGNAL_SUB_AGENT_APPROVALS,
        SIGNAL_SUB_AGENT_CANCEL,
        SUB_AGENT_WORKFLOW,
        SubAgentApprovals,
        SubAgentInput,
    )

from durable_loop.workflows.child_session import CHILD_DONE, ChildSessionWorkflow
from durable_loop.workflows.run_control import RunControl

Snapshot = tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]


class TaskControl(RunControl):
    """Run control whose cancel also holds for a task not running yet (queued, or parked
    on held calls and about to resume)."""

    def __init__(self) -> None:
        super().__init__()
        self.task_cancelled: str | None = None

    def cancel_task(self, reason: str) -> None:
        self.task_cancelled = reason
        self.cancel_running(reason)

    def begin(self, message_id: str) -> None:
        super().begin(message_id)
        self.reason = self.task_cancelled


@workflow.defn(name=SUB_AGENT_WORKFLOW)
class SubAgentWorkflow(ChildSessionWorkflow):
    """A child session answering one task for its parent session's model."""

    @workflow.init
    def __init__(self, inp: SubAgentInput) -> None:
        super().__init__(inp.session)
        self._children.depth = inp.depth
        self._task_control = TaskControl()
        self._control = self._task_control
        self._parent_workflow_id = inp.parent_workflow_id
        self._answered_all = False
        # Unlike a child session, a sub-agent does not close while its task waits on held
        # tool calls (closing would expire them): it closes once the task has its answer.
        self._closing = None

    # Another input type than the child session's: the override changes the signature.
    @workflow.run
    async def run(self, inp: SubAgentInput) -> ChildSessionResult:  # type: ignore[override]
        reporter = asyncio.create_task(self._report_approvals())
        closer = asyncio.create_task(self._close_when_answered())
        try:
            return await super().run(inp.session)
        finally:
            self._answered_all = True
            await reporter
            closer.cancel()

    def _should_continue_as_new(self) -> bool:
        return False  # one task, bounded by its max_turns: it ends instead

    async def _close_when_answered(self) -> None:
        await workflow.wait_condition(
            lambda: not self._queue and self._parked is None and self._in_progress is None
        )
        self._closing = CHILD_DONE

    @workflow.signal(name=SIGNAL_SUB_AGENT_CANCEL)
    async def cancel_task(self, request: CancelMessageRequest) -> None:
        """The parent's message was cancelled: end the task cancelled, whether it is
        queued, running or waiting on held calls (those expire, so nothing runs)."""
        self._task_control.cancel_task(request.reason)
        if self._parked is not None:
            await self._approvals.close_held(self._parked.held)

    def _approvals_report(self) -> SubAgentApprovals:
        own = self._approvals.listing()
        return SubAgentApprovals(
            session_id=self._session_id,
            pending=[*own.pending, *self._children.pending()],
            decided=[*own.decided, *self._children.decided()],
        )

    def _snapshot(self) -> Snapshot:
        report = self._approvals_report()
        return (
            tuple((p.session_id, p.call_id) for p in report.pending),
            tuple((d.call_id, d.fingerprint) for d in report.decided),
        )

    async def _report_approvals(self) -> None:
        """Signal the parent whenever the held calls change, until the task is answered."""
        self._reported = self._snapshot()
        while True:
            await workflow.wait_condition(
                lambda: self._answered_all or self._snapshot() != self._reported
            )
            if self._answered_all:
                return
            self._reported = self._snapshot()
            parent = workflow.get_external_workflow_handle(self._parent_workflow_id)
            try:
                await parent.signal(SIGNAL_SUB_AGENT_APPROVALS, self._approvals_report())
            except FailureError:
                workflow.logger.warning("the parent session did not take the approvals report")
