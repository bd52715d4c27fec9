"""Decoding one workflow run's history events into typed activity records (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from pydantic import BaseModel
from temporalio.api.common.v1 import Payloads
from temporalio.api.enums.v1 import EventType
from temporalio.api.failure.v1 import Failure
from temporalio.api.history.v1 import HistoryEvent
from temporalio.contrib.pydantic import pydantic_data_converter

from durable_loop.client.trace.models import DecodedRun, LlmCall, RepairRun, ToolRun
from durable_loop.core import names
from durable_loop.core.activity_contracts import (
    LlmTurnInput,
    LlmTurnOutput,
    ToolRunInput,
    ToolRunOutput,
)
from durable_loop.core.argument_repair import RepairCallInput, RepairCallOutput
from durable_loop.core.contracts import RunResult
from durable_loop.core.errors import CodedError, ErrorCode
from durable_loop.core.sub_agents import SUB_AGENT_WORKFLOW

M = TypeVar("M", bound=BaseModel)
CONVERTER = pydantic_data_converter.payload_converter


def _decode(payloads: Payloads, model: type[M]) -> M | None:
    if not payloads.payloads:
        return None
    value = CONVERTER.from_payloads(list(payloads.payloads), [model])[0]
    return value if isinstance(value, model) else None


def failure_error(failure: Failure) -> CodedError:
    """The code an activity failure carries (the ApplicationError type for provider and
    config errors), or a generic one for timeouts and cancellations."""
    if failure.HasField("application_failure_info") and failure.application_failure_info.type:
        code = failure.application_failure_info.type
    elif failure.HasField("timeout_failure_info"):
        code = ErrorCode.TIMEOUT
    elif failure.HasField("canceled_failure_info"):
        code = ErrorCode.CANCELED
    else:
        code = ErrorCode.ACTIVITY_FAILED
    return CodedError(code=code, message=" ".join(failure.message.split()))


def decode_run(events: Sequence[HistoryEvent], run_id: str, run_index: int) -> DecodedRun:
    run = DecodedRun(
        run_index=run_index,
        run_id=run_id,
        event_count=len(events),
        history_bytes=sum(e.ByteSize() for e in events),
    )
    scheduled: dict[int, LlmCall | ToolRun | RepairRun] = {}
    for event in events:
        kind = event.event_type
        if kind == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            attrs = event.activity_task_scheduled_event_attributes
            record = _scheduled(attrs.activity_type.name, attrs.input, event.event_id)
            if isinstance(record, LlmCall):
                run.llm_calls.append(record)
            elif isinstance(record, ToolRun):
                run.tool_runs.append(record)
            elif isinstance(record, RepairRun):
                run.repairs.append(record)
            if record is not None:
                record.scheduled_ns = event.event_time.ToNanoseconds()
                scheduled[event.event_id] = record
        elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            started = event.activity_task_started_event_attributes
            if (rec := scheduled.get(started.scheduled_event_id)) is not None:
                rec.attempt = max(started.attempt, 1)
        elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            done = event.activity_task_completed_event_attributes
            if isinstance(rec := scheduled.get(done.scheduled_event_id), LlmCall):
                rec.output = _decode(done.result, LlmTurnOutput)
            elif isinstance(rec, ToolRun):
                rec.output = _decode(done.result, ToolRunOutput)
            elif isinstance(rec, RepairRun):
                rec.output = _decode(done.result, RepairCallOutput)
            if rec is not None:
                rec.closed_ns = event.event_time.ToNanoseconds()
        elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED:
            failed = event.activity_task_failed_event_attributes
            if (rec := scheduled.get(failed.scheduled_event_id)) is not None:
                rec.failure = failure_error(failed.failure)
                rec.closed_ns = event.event_time.ToNanoseconds()
        elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
            timed_out = event.activity_task_timed_out_event_attributes
            if (rec := scheduled.get(timed_out.scheduled_event_id)) is not None:
                rec.failure = failure_error(timed_out.failure)
                rec.closed_ns = event.event_time.ToNanoseconds()
        elif kind == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED:
            outcome = event.workflow_execution_update_completed_event_attributes.outcome
            if outcome.HasField("success") and (res := _decode(outcome.success, RunResult)):
                run.results.append(res)
        elif kind == EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
            child = event.start_child_workflow_execution_initiated_event_attributes
            if child.workflow_type.name == SUB_AGENT_WORKFLOW:
                run.sub_agent_workflow_ids.append(child.workflow_id)
        elif kind == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
            run.continued_as_new = True
    return run


def _scheduled(
    activity: str, payloads: Payloads, event_id: int
) -> LlmCall | ToolRun | RepairRun | None:
    if activity == names.LLM_TURN and (llm_in := _decode(payloads, LlmTurnInput)):
        return LlmCall(input=llm_in, scheduled_event_id=event_id)
    is_tool = activity in (names.RUN_TOOL, names.RUN_LONG_TOOL)
    if is_tool and (tool_in := _decode(payloads, ToolRunInput)):
        return ToolRun(input=tool_in, scheduled_event_id=event_id)
    if activity == names.REPAIR_TOOL_CALL and (repair_in := _decode(payloads, RepairCallInput)):
        return RepairRun(input=repair_in, scheduled_event_id=event_id)
    return None
