"""One sub-agent call: the model's tool call runs as a child workflow of the session.

The child (``SubAgent``, id ``session-<parent session>--<call id>-<result seq>``) is a
session of its own: its transcript is in the store under its session id and its events in
its own history; the parent's history holds only the child's start and completion. The
parent's call waits for it. Cancelling the parent's message sends the child a
``cancel_task`` Signal, so the child ends its task cancelled (also while it waits
on held calls, which then expire) and still returns its
usage; the parent pairs the call with ``TOOL_CALL_CANCELLED``. The child's usage is added
to the parent's, and its budget is capped by the parent's remaining one, so no token goes
uncounted. A session cancelled outright cancels the child too (``REQUEST_CANCEL``, waited
for).

Only a catalog with sub-agents issues these commands; no history recorded before sub-agents
existed has one, so no patch guards them (docs/versioning.md).
Deterministic workflow code.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Protocol

from temporalio import workflow
from temporalio.exceptions import ApplicationError, ChildWorkflowError
from temporalio.workflow import ChildWorkflowCancellationType, ParentClosePolicy

with workflow.unsafe.imports_passed_through():
    from pydantic import JsonValue

    from durable_loop.core import names
    from durable_loop.core.activity_contracts import AppendItem, ToolRunOutput
    from durable_loop.core.activity_refs import READ_TOOL_CALLS_REF
    from durable_loop.core.approvals import ReadToolCallsInput, ToolCallDecided, schema_problems
    from durable_loop.core.config import RuntimeConfig, SessionSettings
    from durable_loop.core.contracts import (
        CancelMessageRequest,
        ChildSessionInput,
        ChildSessionResult,
        RunResult,
    )
    from durable_loop.core.envelope import Envelope
    from durable_loop.core.errors import CodedError, ErrorCode
    from durable_loop.core.guards import CallDecision
    from durable_loop.core.messages import Message, Usage
    from durable_loop.core.outcome import preview
    from durable_loop.core.sub_agent_config import TASK_ARGUMENT, SubAgentConfig, task_parameters
    from durable_loop.core.sub_agents import (
        MEMO_PARENT_SESSION,
        MEMO_SUB_AGENT,
        SIGNAL_SUB_AGENT_CANCEL,
        SUB_AGENT_WORKFLOW,
        SubAgentInput,
        child_envelope,
        child_message,
        child_session_id,
        child_settings,
    )

from durable_loop.workflows.activity_calls import run_local_activity
from durable_loop.workflows.run_control import RunControl
from durable_loop.workflows.sub_agent_children import SubAgentChildren
from durable_loop.workflows.visibility import MEMO_SESSION, MEMO_TITLE


class _Cursor(Protocol):
    usage: Usage


class ParentLoop(Protocol):
    """What a sub-agent call needs of the message loop that makes it."""

    session_id: str
    settings: SessionSettings
    config: RuntimeConfig
    result: RunResult
    control: RunControl
    children: SubAgentChildren
    appends: list[AppendItem]

    @property
    def cursor(self) -> _Cursor: ...


async def run_sub_agent(
    loop: ParentLoop,
    assistant_seq: int,
    decision: CallDecision,
    approved: ToolCallDecided | None = None,
) -> ToolRunOutput:
    call = decision.call
    config = loop.children.configs.get(call.name)
    if config is None:
        return _answer(loop, decision, _refusal(ErrorCode.TOOL_NOT_FOUND, "is not configured"))
    depth, limit = loop.children.depth + 1, loop.config.max_sub_agent_depth
    if depth > limit:
        why = f"would run at depth {depth}; max_sub_agent_depth is {limit}"
        return _answer(loop, decision, _refusal(ErrorCode.SUB_AGENT_TOO_DEEP, why))
    arguments = approved.arguments if approved and approved.arguments else None
    if arguments is None:
        arguments = await _read_arguments(loop.session_id, assistant_seq, call.index)
    problems = schema_problems(task_parameters(), arguments)
    if problems:
        return _answer(loop, decision, _refusal(ErrorCode.INVALID_ARGS, "; ".join(problems)))
    task = arguments[TASK_ARGUMENT]
    assert isinstance(task, str)
    child = child_session_id(loop.session_id, call.id, decision.result_seq)
    handle = await _start(loop, config, child, call.id, task, depth)
    loop.children.started(child, handle)
    try:
        result = await _wait(loop, handle, call.id)
    finally:
        loop.children.finished(child)
    if isinstance(result, ChildSessionResult):
        usage = result.carried.usage
        loop.result.usage = loop.result.usage + usage
        loop.cursor.usage = loop.cursor.usage + usage
        ran = next((r for r in reversed(result.results) if r.message_id == call.id), None)
    else:
        ran = RunResult(message_id=call.id, status="failed", error=result)
    if loop.control.reason is not None:
        reason = f"tool {call.name!r} was cancelled: its message was {loop.control.reason}"
        return _answer(loop, decision, Envelope.failure(ErrorCode.TOOL_CALL_CANCELLED, reason))
    return _answer(loop, decision, child_envelope(child, ran))


async def _read_arguments(session_id: str, assistant_seq: int, index: int) -> dict[str, JsonValue]:
    read = await run_local_activity(
        READ_TOOL_CALLS_REF,
        ReadToolCallsInput(
            session_id=session_id, assistant_seq=assistant_seq, call_indexes=[index]
        ),
        start_to_close_timeout=timedelta(seconds=30),
    )
    return read.calls[0].arguments or {}


async def _start(
    loop: ParentLoop, config: SubAgentConfig, child: str, call_id: str, task: str, depth: int
) -> workflow.ChildWorkflowHandle[object, ChildSessionResult]:
    settings = child_settings(loop.settings, config, loop.session_id, loop.cursor.usage)
    memo: dict[str, str] = {
        MEMO_SESSION: child,
        MEMO_TITLE: settings.title or config.name,
        MEMO_PARENT_SESSION: loop.session_id,
        MEMO_SUB_AGENT: config.name,
    }
    inp = SubAgentInput(
        session=ChildSessionInput(
            session_id=child,
            settings=settings,
            messages=[child_message(task, config, message_id=call_id)],
        ),
        depth=depth,
        parent_workflow_id=workflow.info().workflow_id,
        parent_session_id=loop.session_id,
        call_id=call_id,
        sub_agent=config.name,
    )
    return await workflow.start_child_workflow(
        SUB_AGENT_WORKFLOW,
        inp,
        id=names.session_workflow_id(child),
        result_type=ChildSessionResult,
        memo=memo,
        parent_close_policy=ParentClosePolicy.REQUEST_CANCEL,
        cancellation_type=ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
        static_summary=f"sub-agent: {config.name} (session {child})",
    )


async def _wait(
    loop: ParentLoop, handle: workflow.ChildWorkflowHandle[object, ChildSessionResult], call_id: str
) -> ChildSessionResult | CodedError:
    """The child's result; a cancel of the parent's message becomes the child's own."""
    try:
        await workflow.wait_condition(lambda: handle.done() or loop.control.reason is not None)
    except asyncio.CancelledError:  # the session itself is cancelled: so is the child
        handle.cancel()
        await workflow.wait([handle])
        raise
    if not handle.done():
        reason = f"the parent's message was {loop.control.reason}"
        request = CancelMessageRequest(message_id=call_id, reason=reason[:200])
        await handle.signal(SIGNAL_SUB_AGENT_CANCEL, request)
    try:
        return await handle
    except ChildWorkflowError as err:
        cause = err.cause
        code = cause.type if isinstance(cause, ApplicationError) and cause.type else None
        message = cause.message if isinstance(cause, ApplicationError) else str(cause or err)
        return CodedError(code=code or ErrorCode.SUB_AGENT_FAILED, message=message)


def _refusal(code: ErrorCode, why: str) -> Envelope:
    return Envelope.failure(code, f"the sub-agent {why}")


def _answer(loop: ParentLoop, decision: CallDecision, envelope: Envelope) -> ToolRunOutput:
    """Store the call's result (the workflow writes it, as for a refused call)."""
    call = decision.call
    message = Message.tool_result(call.id, call.name, envelope)
    loop.appends.append(AppendItem(seq=decision.result_seq, message=message))
    content = message.content
    return ToolRunOutput(
        result_seq=decision.result_seq,
        call_id=call.id,
        name=call.name,
        ok=envelope.ok,
        error_codes=envelope.error_codes,
        output_bytes=len((content or "").encode()),
        preview=preview(content),
        executed=envelope.ok or ErrorCode.SUB_AGENT_FAILED in envelope.error_codes,
    )
