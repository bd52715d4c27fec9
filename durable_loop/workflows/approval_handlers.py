"""The Query, Signal and Update of tool approvals, mixed into the session workflow: they
read and decide through the session's :class:`~durable_loop.workflows.approvals.ApprovalBook`,
and route decisions on calls its sub-agents hold to those sub-agents."""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from durable_loop.core.approvals import (
        QUERY_TOOL_APPROVALS,
        SIGNAL_TOOL_CALL_DECISION,
        UPDATE_DECIDE_TOOL_CALL,
        UPDATE_WITHDRAW_TOOL_POLICY,
        ToolApprovalList,
        ToolCallDecided,
        ToolCallDecision,
        ToolPolicy,
        WithdrawToolPolicy,
    )

from durable_loop.workflows.approvals import ApprovalBook
from durable_loop.workflows.sub_agent_children import SubAgentChildren


class ApprovalHandlers:
    """Mixed into the session workflow: the Query, Signal and Update of tool approvals.
    Calls held by the session's running sub-agents are listed too, and decisions on them
    are routed to the sub-agent (see ``sub_agent_children``) and listed with the session's
    own."""

    _approvals: ApprovalBook
    _children: SubAgentChildren

    @workflow.query(name=QUERY_TOOL_APPROVALS)
    def tool_approvals(self) -> ToolApprovalList:
        listing = self._approvals.listing()
        listing.pending += self._children.pending()
        routed = self._children.recent_decided()
        if routed:
            decided = [*listing.decided, *routed]
            listing.decided = sorted(decided, key=lambda d: d.decided_at)
        return listing

    def _sub_agent_of(self, decision: ToolCallDecision) -> str | None:
        """The sub-agent session holding the decided call; None for this session's own
        (which wins when a decision names no session and both hold the call id)."""
        own = decision.session_id in (None, self._approvals.session_id)
        if own and decision.call_id in self._approvals.pending:
            return None
        return self._children.owner(decision)

    @workflow.signal(name=SIGNAL_TOOL_CALL_DECISION)
    async def tool_call_decision(self, decision: ToolCallDecision) -> None:
        child = self._sub_agent_of(decision)
        if child is not None:
            await self._children.forward(child, decision)
            return
        try:
            self._approvals.check(decision)
        except ApplicationError as err:
            await self._approvals.record_refusal(decision, err)
            return
        await self._approvals.decide(decision)

    @workflow.update(name=UPDATE_DECIDE_TOOL_CALL)
    async def decide_tool_call(self, decision: ToolCallDecision) -> ToolCallDecided:
        """Under the ``decision-rules`` patch the handler, not the validator, refuses a
        decision on this session's own calls, so the refusal is audited like a Signal's."""
        child = self._sub_agent_of(decision)
        if child is not None:
            return await self._children.decide(child, decision)
        if self._approvals.strict:
            try:
                self._approvals.check(decision)
            except ApplicationError as err:
                await self._approvals.record_refusal(decision, err)
                raise
        return await self._approvals.decide(decision)

    @workflow.update(name=UPDATE_WITHDRAW_TOOL_POLICY)
    async def withdraw_tool_policy(self, request: WithdrawToolPolicy) -> ToolPolicy:
        """Withdraw a standing approval of this session (not its sub-agents': a standing
        approval never reaches them). A refusal is audited, as a decision's is."""
        try:
            self._approvals.check_withdrawal(request)
        except ApplicationError as err:
            await self._approvals.record_withdrawal_refusal(request, err)
            raise
        return await self._approvals.withdraw(request)

    @decide_tool_call.validator
    def _validate_tool_call_decision(self, decision: ToolCallDecision) -> None:
        child = self._sub_agent_of(decision)
        if child is not None:
            self._children.check(child, decision, strict=self._approvals.strict)
        elif not self._approvals.strict:
            self._approvals.check(decision)
