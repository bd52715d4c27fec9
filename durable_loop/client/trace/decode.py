"""Decoding one workflow run's history events into typed records (pure): the activities
of each turn, the Updates, Signals and decisions (:mod:`.run_events`), the sub-agents it
started, and the results a child session ended with."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from temporalio.api.common.v1 import Payloads
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent

from durable_loop.client.trace.models import (
    DecodedRun,
    GateRun,
    LlmCall,
    RepairRun,
    SubAgentRun,
    ToolRun,
)
from durable_loop.client.trace.payloads import decode_payload, failure_error
from durable_loop.client.trace.run_events import EntryDecoder
from durable_loop.client.trace.tool_names import catalog_load_result, catalog_names
from durable_loop.core import names
from durable_loop.core.activity_contracts import (
    LlmTurnInput,
    LlmTurnOutput,
    ToolRunInput,
    ToolRunOutput,
)
from durable_loop.core.argument_repair import RepairCallInput, RepairCallOutput
from durable_loop.core.contracts import ChildSessionResult
from durable_loop.core.conversation_gate import ConversationGateInput, ConversationGateOutput
from durable_loop.core.errors import CodedError, ErrorCode
from durable_loop.core.proposals import (
    FACTS_COMMIT,
    PROPOSAL_CLOSE,
    RECORD_DECISION,
    DecisionAudit,
    SettleInput,
)
from durable_loop.core.sub_agents import (
    SIGNAL_SUB_AGENT_APPROVALS,
    SUB_AGENT_WORKFLOW,
    SubAgentApprovals,
)

__all__ = ["decode_run", "failure_error"]

CHILD_WORKFLOWS = (names.CHILD_SESSION_WORKFLOW, SUB_AGENT_WORKFLOW)
"""Workflows that end with a ``ChildSessionResult`` (their messages' results)."""
SETTLES = (FACTS_COMMIT, PROPOSAL_CLOSE)
E = EventType


class _Run:
    """The state of one pass over a run's events."""

    def __init__(self, run: DecodedRun) -> None:
        self.run = run
        self.entries = EntryDecoder(run.run_index)
        self.scheduled: dict[int, LlmCall | ToolRun | RepairRun | GateRun] = {}
        self.children: dict[str, SubAgentRun] = {}
        self.catalog_loads: set[int] = set()
        """Scheduled events of ``list_tools`` run as a regular activity."""
        self.workflow_type = ""

    @property
    def child_session(self) -> bool:
        """A workflow that ends with its messages' results (a ``ChildSessionResult``)."""
        return self.workflow_type in CHILD_WORKFLOWS

    def event(self, event: HistoryEvent) -> None:
        kind = event.event_type
        if kind == E.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
            attrs = event.workflow_execution_started_event_attributes
            self.workflow_type = attrs.workflow_type.name
        elif kind == E.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            self.activity_scheduled(event)
        elif kind in _ACTIVITY_ENDS:
            self.activity_ended(event)
        elif kind in _UPDATES or kind == E.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
            self.message(event)
        elif kind in _CHILD_EVENTS:
            self.child(event)
        elif kind == E.EVENT_TYPE_MARKER_RECORDED:
            if (loaded := catalog_load_result(event)) is not None:
                self.run.original_names.update(catalog_names(loaded))
        elif kind == E.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
            self.run.continued_as_new = True
        elif kind == E.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED and self.child_session:
            result = event.workflow_execution_completed_event_attributes.result
            ended = decode_payload(result, ChildSessionResult)
            self.run.child_results = list(ended.results) if ended else []

    def activity_scheduled(self, event: HistoryEvent) -> None:
        attrs = event.activity_task_scheduled_event_attributes
        activity, payloads = attrs.activity_type.name, attrs.input
        where = self.entries.where(event.event_id, _time(event))
        if activity == RECORD_DECISION:
            if (audit := decode_payload(payloads, DecisionAudit)) is not None:
                self.entries.audit(audit, where)
            return
        if activity in SETTLES:
            if (settle := decode_payload(payloads, SettleInput)) is not None:
                self.entries.settle_scheduled(settle, where)
            return
        if activity == names.LIST_TOOLS:
            self.catalog_loads.add(event.event_id)
            return
        record = _scheduled(activity, payloads, event.event_id)
        if isinstance(record, LlmCall):
            self.run.llm_calls.append(record)
        elif isinstance(record, ToolRun):
            self.run.tool_runs.append(record)
        elif isinstance(record, RepairRun):
            self.run.repairs.append(record)
        elif isinstance(record, GateRun):
            self.run.gates.append(record)
        if record is not None:
            record.scheduled_ns = event.event_time.ToNanoseconds()
            self.scheduled[event.event_id] = record

    def activity_ended(self, event: HistoryEvent) -> None:
        kind = event.event_type
        if kind == E.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            started = event.activity_task_started_event_attributes
            if (rec := self.scheduled.get(started.scheduled_event_id)) is not None:
                rec.attempt = max(started.attempt, 1)
            return
        if kind in (
            E.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED,
            E.EVENT_TYPE_ACTIVITY_TASK_CANCELED,
        ):
            scheduled_id = (
                event.activity_task_cancel_requested_event_attributes.scheduled_event_id
                if kind == E.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED
                else event.activity_task_canceled_event_attributes.scheduled_event_id
            )
            rec = self.scheduled.get(scheduled_id)
            if rec is not None and rec.failure is None:  # the workflow gave up on it
                rec.failure = CodedError(
                    code=ErrorCode.CANCELED, message="the workflow cancelled it"
                )
        elif kind == E.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            done = event.activity_task_completed_event_attributes
            self.entries.settle_completed(done.scheduled_event_id, done.result)
            if done.scheduled_event_id in self.catalog_loads:
                self.run.original_names.update(catalog_names(done.result))
            rec = self.scheduled.get(done.scheduled_event_id)
            if rec is not None and rec.failure is not None:
                return  # it finished after the workflow cancelled it: its output went unused
            if isinstance(rec, LlmCall):
                rec.output = decode_payload(done.result, LlmTurnOutput)
            elif isinstance(rec, ToolRun):
                rec.output = decode_payload(done.result, ToolRunOutput)
            elif isinstance(rec, RepairRun):
                rec.output = decode_payload(done.result, RepairCallOutput)
            elif isinstance(rec, GateRun):
                rec.output = decode_payload(done.result, ConversationGateOutput)
        else:
            failed = (
                event.activity_task_failed_event_attributes
                if kind == E.EVENT_TYPE_ACTIVITY_TASK_FAILED
                else event.activity_task_timed_out_event_attributes
            )
            if (rec := self.scheduled.get(failed.scheduled_event_id)) is not None:
                rec.failure = failure_error(failed.failure)
        if rec is not None:
            rec.closed_ns = event.event_time.ToNanoseconds()

    def message(self, event: HistoryEvent) -> None:
        """An Update's events, or a Signal."""
        kind = event.event_type
        where = self.entries.where(event.event_id, _time(event))
        if kind == E.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ADMITTED:
            request = event.workflow_execution_update_admitted_event_attributes.request
            self.entries.admitted(request.meta.update_id, request.input.name, request.input.args)
        elif kind == E.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
            accepted = event.workflow_execution_update_accepted_event_attributes
            request = accepted.accepted_request
            update_id = request.meta.update_id or accepted.protocol_instance_id
            self.entries.accepted(update_id, request.input.name, request.input.args, where)
        elif kind == E.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED:
            completed = event.workflow_execution_update_completed_event_attributes
            outcome = completed.outcome
            self.entries.completed(
                completed.meta.update_id,
                outcome.success if outcome.HasField("success") else None,
                outcome.failure if outcome.HasField("failure") else None,
                where,
            )
        elif kind == E.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_REJECTED:
            rejected = event.workflow_execution_update_rejected_event_attributes
            request = rejected.rejected_request
            self.entries.rejected(request.input.name, request.input.args, rejected.failure, where)
        else:
            signaled = event.workflow_execution_signaled_event_attributes
            if signaled.signal_name == SIGNAL_SUB_AGENT_APPROVALS:
                report = decode_payload(signaled.input, SubAgentApprovals)
                if report is not None and report.session_id in self.children:
                    self.children[report.session_id].held = list(report.pending)
            else:
                self.entries.signaled(signaled.signal_name, signaled.input, where)

    def child(self, event: HistoryEvent) -> None:
        kind = event.event_type
        if kind == E.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
            attrs = event.start_child_workflow_execution_initiated_event_attributes
            if attrs.workflow_type.name == SUB_AGENT_WORKFLOW:
                self.run.sub_agent_workflow_ids.append(attrs.workflow_id)
                child = SubAgentRun(workflow_id=attrs.workflow_id)
                self.children[child.session_id] = child
                self.run.sub_agents.append(child)
            return
        if kind == E.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED:
            done = event.child_workflow_execution_completed_event_attributes
            child_run = self._child(done.workflow_execution.workflow_id)
            if child_run is not None:
                child_run.result = decode_payload(done.result, ChildSessionResult)
                child_run.ended = True
            return
        ended = _child_end(event)
        if ended is not None and (child_run := self._child(ended[0])) is not None:
            child_run.failure, child_run.ended = ended[1], True

    def _child(self, workflow_id: str) -> SubAgentRun | None:
        return next((c for c in self.run.sub_agents if c.workflow_id == workflow_id), None)


def _child_end(event: HistoryEvent) -> tuple[str, CodedError] | None:
    """(workflow id, why) of a child that failed, timed out, was cancelled or terminated."""
    kind = event.event_type
    if kind == E.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_FAILED:
        failed = event.child_workflow_execution_failed_event_attributes
        return failed.workflow_execution.workflow_id, failure_error(failed.failure)
    if kind == E.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TIMED_OUT:
        timed_out = event.child_workflow_execution_timed_out_event_attributes
        error = CodedError(code=ErrorCode.TIMEOUT, message="the sub-agent timed out")
        return timed_out.workflow_execution.workflow_id, error
    if kind == E.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_CANCELED:
        cancelled = event.child_workflow_execution_canceled_event_attributes
        error = CodedError(code=ErrorCode.CANCELED, message="the sub-agent was cancelled")
        return cancelled.workflow_execution.workflow_id, error
    if kind == E.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TERMINATED:
        terminated = event.child_workflow_execution_terminated_event_attributes
        error = CodedError(code=ErrorCode.SUB_AGENT_FAILED, message="the sub-agent was terminated")
        return terminated.workflow_execution.workflow_id, error
    return None


_ACTIVITY_ENDS = (
    E.EVENT_TYPE_ACTIVITY_TASK_STARTED,
    E.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED,
    E.EVENT_TYPE_ACTIVITY_TASK_CANCELED,
    E.EVENT_TYPE_ACTIVITY_TASK_COMPLETED,
    E.EVENT_TYPE_ACTIVITY_TASK_FAILED,
    E.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT,
)
_UPDATES = (
    E.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ADMITTED,
    E.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED,
    E.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED,
    E.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_REJECTED,
)
_CHILD_EVENTS = (
    E.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED,
    E.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED,
    E.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_FAILED,
    E.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TIMED_OUT,
    E.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_CANCELED,
    E.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TERMINATED,
)


def _time(event: HistoryEvent) -> datetime:
    return event.event_time.ToDatetime(tzinfo=UTC)


def decode_run(events: Sequence[HistoryEvent], run_id: str, run_index: int) -> DecodedRun:
    run = DecodedRun(
        run_index=run_index,
        run_id=run_id,
        event_count=len(events),
        history_bytes=sum(e.ByteSize() for e in events),
    )
    state = _Run(run)
    for event in events:
        state.event(event)
    run.entries, run.results = state.entries.finish()
    run.result_events = state.entries.result_events
    return run


def _scheduled(
    activity: str, payloads: Payloads, event_id: int
) -> LlmCall | ToolRun | RepairRun | GateRun | None:
    if activity == names.LLM_TURN and (llm_in := decode_payload(payloads, LlmTurnInput)):
        return LlmCall(input=llm_in, scheduled_event_id=event_id)
    is_tool = activity in (names.RUN_TOOL, names.RUN_LONG_TOOL)
    if is_tool and (tool_in := decode_payload(payloads, ToolRunInput)):
        return ToolRun(input=tool_in, scheduled_event_id=event_id)
    if activity == names.REPAIR_TOOL_CALL and (
        repair_in := decode_payload(payloads, RepairCallInput)
    ):
        return RepairRun(input=repair_in, scheduled_event_id=event_id)
    if activity == names.CONVERSATION_GATE and (
        gate_in := decode_payload(payloads, ConversationGateInput)
    ):
        return GateRun(input=gate_in, scheduled_event_id=event_id)
    return None
