"""A session's running sub-agents, as its approval handlers see them.

A workflow cannot query another, so each sub-agent signals its held tool calls to its
parent (``sub_agent_approvals``) whenever they change; the parent lists them in its own
``tool_approvals`` Query (each marked with the child's session id) and routes a decision
on one of them to the child as the ``tool_call_decision`` Signal (a workflow cannot send
an Update). Nested sub-agents report through their parent, so decisions reach any depth.

Patch ``sub-agent-calls-wait``: once a sub-agent reports a held call, the session answers
the running message's send with ``awaiting_approval`` and those calls (as it does for its
own held calls), and its status (and ``DurableLoopStatus``) says ``awaiting_approval``
while they wait; a run recorded before kept answering only at the end.
Deterministic workflow code.
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from durable_loop.core.approvals import (
        SIGNAL_TOOL_CALL_DECISION,
        PendingToolCall,
        ToolCallDecided,
        ToolCallDecision,
    )
    from durable_loop.core.errors import ErrorCode
    from durable_loop.core.sub_agent_config import SubAgentConfig
    from durable_loop.core.sub_agents import SIGNAL_SUB_AGENT_APPROVALS, SubAgentApprovals

from durable_loop.workflows.proposals import DECIDED_KEPT, check_decider
from durable_loop.workflows.refusals import refuse

ChildHandle = workflow.ChildWorkflowHandle[Any, Any]
WAIT_PATCH = "sub-agent-calls-wait"


class SubAgentChildren:
    """The sub-agent configurations of the catalog, this session's depth, and the
    sub-agents running now with the calls they hold."""

    def __init__(self) -> None:
        self.configs: dict[str, SubAgentConfig] = {}
        self.depth = 0
        """0 for a session; a sub-agent's own depth otherwise."""
        self.handles: dict[str, ChildHandle] = {}
        self.reports: dict[str, SubAgentApprovals] = {}
        self.answers_waiting = False
        """Patch ``sub-agent-calls-wait`` is on: a sub-agent's held calls make the running
        message wait for a person, as the session's own do."""
        self.finished_decided: list[ToolCallDecided] = []
        """Decisions on finished sub-agents' calls, for the session's listing (the newest
        ``DECIDED_KEPT``; not carried over continue-as-new)."""

    # ------------------------------------------------------------------ running children

    def started(self, session_id: str, handle: ChildHandle) -> None:
        self.handles[session_id] = handle

    def finished(self, session_id: str) -> None:
        self.handles.pop(session_id, None)
        report = self.reports.pop(session_id, None)
        if report is not None:
            self.finished_decided = [*self.finished_decided, *report.decided][-DECIDED_KEPT:]

    def report(self, report: SubAgentApprovals) -> None:
        if report.session_id in self.handles:  # a late report of a finished child is stale
            self.reports[report.session_id] = report
            if report.pending and not self.answers_waiting:
                self.answers_waiting = workflow.patched(WAIT_PATCH)

    def pending(self) -> list[PendingToolCall]:
        return [p for r in self.reports.values() for p in r.pending]

    def waiting(self) -> list[PendingToolCall]:
        """The calls the running message waits on in its sub-agents (none before the patch)."""
        return self.pending() if self.answers_waiting else []

    def decided(self) -> list[ToolCallDecided]:
        """Decisions on the running sub-agents' calls (what a sub-agent reports upward)."""
        return [d for r in self.reports.values() for d in r.decided]

    def recent_decided(self) -> list[ToolCallDecided]:
        """Decisions on sub-agents' calls, finished ones too, for the session's listing."""
        return [*self.finished_decided, *self.decided()]

    # ------------------------------------------------------------------ decisions

    def owner(self, decision: ToolCallDecision) -> str | None:
        """The child whose held call ``decision`` is about, or None (this session's own)."""
        for child, report in self.reports.items():
            for pending in report.pending:
                if pending.call_id != decision.call_id:
                    continue
                if decision.session_id in (None, pending.session_id):
                    return child
        return None

    def check(self, child: str, decision: ToolCallDecision, *, strict: bool) -> None:
        """The parent's side of the child's checks, so an Update is refused before it is
        accepted; the child checks again when the Signal arrives. Under ``strict`` (the
        ``decision-rules`` patch) the child's expiry timer, not this clock, is the deadline."""
        pending = self._pending(child, decision)
        if not strict and workflow.now() >= pending.expires_at:
            raise refuse(
                ErrorCode.EXPIRED, f"tool call {pending.call_id} expired at {pending.expires_at}"
            )
        check_decider(decision.verdict, decision.approver, decision.comment, strict=strict)
        if decision.fingerprint != pending.fingerprint:
            raise refuse(
                ErrorCode.FINGERPRINT_MISMATCH,
                f"tool call {pending.call_id} has fingerprint {pending.fingerprint}; "
                f"the decision names {decision.fingerprint!r}",
            )

    async def forward(self, child: str, decision: ToolCallDecision) -> None:
        handle = self.handles.get(child)
        if handle is not None:
            await handle.signal(SIGNAL_TOOL_CALL_DECISION, decision)

    async def decide(self, child: str, decision: ToolCallDecision) -> ToolCallDecided:
        """Route the decision to the child and wait until it reports the call decided."""
        pending = self._pending(child, decision)
        await self.forward(child, decision)
        await workflow.wait_condition(lambda: self._settled(child, pending))
        done = self._decided(child, pending)
        if done is None:
            raise ApplicationError(
                f"sub-agent session {child} ended before deciding tool call {pending.call_id}",
                type=ErrorCode.UNKNOWN_TOOL_CALL,
            )
        return done

    def _pending(self, child: str, decision: ToolCallDecision) -> PendingToolCall:
        report = self.reports[child]
        return next(
            p
            for p in report.pending
            if p.call_id == decision.call_id and decision.session_id in (None, p.session_id)
        )

    def _decided(self, child: str, pending: PendingToolCall) -> ToolCallDecided | None:
        report = self.reports.get(child)
        if report is None:
            return None
        return next(
            (
                d
                for d in report.decided
                if d.call_id == pending.call_id and d.fingerprint == pending.fingerprint
            ),
            None,
        )

    def _settled(self, child: str, pending: PendingToolCall) -> bool:
        report = self.reports.get(child)
        if report is None or self._decided(child, pending) is not None:
            return True
        return all(
            p.call_id != pending.call_id or p.session_id != pending.session_id
            for p in report.pending
        )


class SubAgentHandlers:
    """Mixed into the session workflow: the Signal its sub-agents report held calls with."""

    _children: SubAgentChildren

    @workflow.signal(name=SIGNAL_SUB_AGENT_APPROVALS)
    def sub_agent_approvals(self, report: SubAgentApprovals) -> None:
        self._children.report(report)
