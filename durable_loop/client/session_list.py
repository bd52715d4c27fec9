"""Sessions as the visibility store lists them: status, model, decisions waiting, turns,
tokens (the ``DurableLoop*`` search attributes the session keeps current), its title, and
its last activity (the time of the newest event in its history).

A session that keeps no search attributes (started while the namespace had none
registered) is listed with those fields empty. Each run a session continued as new from is
left out: a session is listed once, by its current run.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from pydantic import BaseModel, Field
from temporalio.api.common.v1 import WorkflowExecution as ExecutionRef
from temporalio.api.workflowservice.v1 import GetWorkflowExecutionHistoryReverseRequest
from temporalio.client import Client, WorkflowExecution, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from durable_loop.client.waiting import IN_FLIGHT, SESSION_TYPES, VisibilityUnavailable
from durable_loop.core import names
from durable_loop.core.errors import ErrorCode
from durable_loop.workflows.visibility import (
    MEMO_TITLE,
    MODEL,
    PENDING_PROPOSALS,
    STATUS,
    TOTAL_TOKENS,
    TURNS,
)

LISTED_QUERY = f'{SESSION_TYPES} AND ExecutionStatus != "ContinuedAsNew"'


class SessionRow(BaseModel):
    session_id: str
    status: str = Field(
        description="The session's state while it runs (idle, running, awaiting_approval, "
        "closing), else how its workflow ended (completed, terminated, ...)"
    )
    running: bool
    model: str | None = None
    waiting: int | None = Field(
        default=None, description="Held tool calls plus pending proposals; None: not kept"
    )
    turns: int | None = None
    total_tokens: int | None = None
    title: str | None = None
    started_at: datetime | None = None
    last_activity: datetime | None = Field(
        default=None, description="Time of the newest event in the session's history"
    )


class SessionListing(BaseModel):
    sessions: list[SessionRow] = Field(default_factory=list)


async def list_sessions(
    client: Client, *, limit: int = 50, running_only: bool = False
) -> SessionListing:
    """The newest ``limit`` sessions (running ones only with ``running_only``)."""
    query = LISTED_QUERY + (' AND ExecutionStatus = "Running"' if running_only else "")
    executions: list[WorkflowExecution] = []
    prefix = names.session_workflow_id("")
    try:
        async for execution in client.list_workflows(query, limit=limit):
            if execution.id.startswith(prefix):
                executions.append(execution)
    except RPCError as err:
        if err.status == RPCStatusCode.UNIMPLEMENTED:
            raise VisibilityUnavailable(
                ErrorCode.QUERY_FAILED,
                "this Temporal server cannot list workflows (no visibility store)",
            ) from None
        raise
    gate = asyncio.Semaphore(IN_FLIGHT)

    async def row(execution: WorkflowExecution) -> SessionRow:
        async with gate:
            return await _row(client, execution, prefix)

    return SessionListing(sessions=list(await asyncio.gather(*(row(e) for e in executions))))


async def _row(client: Client, execution: WorkflowExecution, prefix: str) -> SessionRow:
    attrs = execution.typed_search_attributes
    running = execution.status == WorkflowExecutionStatus.RUNNING
    if running:
        status = attrs.get(STATUS) or "running"
    else:
        status = execution.status.name.lower() if execution.status else "unknown"
    title = await execution.memo_value(MEMO_TITLE, default=None)
    return SessionRow(
        session_id=execution.id.removeprefix(prefix),
        status=status,
        running=running,
        model=attrs.get(MODEL),
        waiting=attrs.get(PENDING_PROPOSALS),
        turns=attrs.get(TURNS),
        total_tokens=attrs.get(TOTAL_TOKENS),
        title=title if isinstance(title, str) else None,
        started_at=execution.start_time,
        last_activity=await _last_activity(client, execution),
    )


async def _last_activity(client: Client, execution: WorkflowExecution) -> datetime | None:
    """The newest history event's time (one event read backwards); the close time when
    the server cannot read backwards."""
    request = GetWorkflowExecutionHistoryReverseRequest(
        namespace=client.namespace,
        execution=ExecutionRef(workflow_id=execution.id, run_id=execution.run_id),
        maximum_page_size=1,
    )
    try:
        page = await client.workflow_service.get_workflow_execution_history_reverse(request)
    except RPCError:
        return execution.close_time or execution.start_time
    events = page.history.events
    return events[0].event_time.ToDatetime(tzinfo=UTC) if events else execution.start_time
