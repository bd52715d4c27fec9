"""Why a message has no reply yet, in words a person can act on.

A session answers one message at a time, and a message parked on tool calls a person must
approve (its own, or its sub-agents') holds every message queued behind it. A caller whose
send times out deserves the truth: the session waits for a person, this message is queued
behind it, and these calls wait. :func:`probe_wait` reads it from the server (the
workflow's state and task queue, the workers polling it, the session's status and what
waits in it, :func:`~durable_loop.client.waiting.waiting_in`) and :meth:`MessageWait.text`
says it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import timedelta

from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError

from durable_loop.client.waiting import waiting_in
from durable_loop.core import names
from durable_loop.core.approvals import PendingToolCall
from durable_loop.core.contracts import SessionStatus
from durable_loop.core.proposals import PendingProposal

PROBE_TIMEOUT_S = 3.0
SHOWN = 5
"""Held calls and proposals named one by one; more are counted."""


@dataclass(frozen=True)
class MessageWait:
    """Why message ``message_id`` of ``session_id`` has no reply yet."""

    session_id: str
    message_id: str
    closed: str | None = None
    """The workflow's status when it is not running (``COMPLETED``, ``TERMINATED``, ...)."""
    task_queue: str | None = None
    """The session's task queue; None: the server did not describe the session."""
    pollers: int | None = None
    """Workers polling that task queue; None: the server did not say."""
    status: SessionStatus | None = None
    """None: the session's queries got no answer (no worker runs it)."""
    held: list[PendingToolCall] = field(default_factory=list)
    proposals: list[PendingProposal] = field(default_factory=list)

    @property
    def waits_for_person(self) -> bool:
        return self.status is not None and (
            self.status.state == "awaiting_approval" or bool(self.held)
        )

    @property
    def held_up(self) -> bool:
        """A person, a missing worker or a closed session holds the message up (not a
        message that simply takes its time)."""
        unanswered = self.task_queue is not None and self.status is None
        return self.waits_for_person or unanswered or self.closed is not None

    def summary(self) -> str:
        """What holds the message up, in one clause (what :meth:`text` begins with)."""
        sid = self.session_id
        if self.closed is not None:
            return f"session {sid} is no longer running ({self.closed.lower()})"
        if self.task_queue is None:
            return f"the server did not describe session {sid}"
        if self.pollers == 0 or self.status is None:
            return f"no worker answers session {sid} (task queue {self.task_queue!r})"
        if self.waits_for_person:
            return (
                f"session {sid} waits for a person: {self._waiting()}; message "
                f"{self.message_id} is queued behind {self._behind()}"
            )
        return f"session {sid} is {self.status.state}"

    def text(self) -> str:
        """One line: what the message waits for and what to do."""
        sid, mid = self.session_id, self.message_id
        later = f"read the reply later with `durable-loop result {sid} {mid}`"
        if self.closed is not None:
            return self.summary()
        if self.task_queue is None:
            return f"{self.summary()}; {later}"
        if self.pollers == 0 or self.status is None:
            return (
                f"{self.summary()}: is a worker polling that task queue? start one with "
                f"`durable-loop worker`; then {later}"
            )
        if self.waits_for_person:
            return (
                f"{self.summary()} and runs once they are decided: list them with "
                f"`durable-loop pending {sid}`, approve or reject each "
                f"(`durable-loop approve {sid} ID --as YOU`), then {later}"
            )
        if self.status.state == "running":
            queued = self.status.queued_messages
            ahead = f" ({queued} message(s) queued)" if queued else ""
            also = f"; waiting for a person: {self._waiting()}" if self.proposals else ""
            return (
                f"session {sid} is still working on a message{ahead}{also}: wait longer "
                f"with --timeout, or {later}"
            )
        return f"{self.summary()}; {later}"

    def _waiting(self) -> str:
        parts = []
        if self.held:
            calls = ", ".join(self._call(c) for c in self.held[:SHOWN])
            parts.append(f"{len(self.held)} held tool call(s): {calls}{_more(self.held)}")
        if self.proposals:
            named = ", ".join(p.proposal_id for p in self.proposals[:SHOWN])
            parts.append(f"{len(self.proposals)} proposal(s): {named}{_more(self.proposals)}")
        return "; ".join(parts) or "held tool calls"

    def _call(self, call: PendingToolCall) -> str:
        where = "" if call.session_id == self.session_id else f" in sub-agent {call.session_id}"
        return f"{call.shown_tool} [{call.call_id}]{where}"

    def _behind(self) -> str:
        others = (self.status.queued_messages if self.status else 0) - 1
        return f"them with {others} other message(s)" if others > 0 else "them"


def _more(items: list[PendingToolCall] | list[PendingProposal]) -> str:
    return f" and {len(items) - SHOWN} more" if len(items) > SHOWN else ""


async def probe_wait(
    client: Client, session_id: str, message_id: str, *, timeout_s: float = PROBE_TIMEOUT_S
) -> MessageWait:
    """Ask the server why ``message_id`` has no reply yet (each step bounded by
    ``timeout_s``; a step without an answer is left unknown)."""
    handle = client.get_workflow_handle(names.session_workflow_id(session_id))
    wait = MessageWait(session_id=session_id, message_id=message_id)
    try:
        async with asyncio.timeout(timeout_s):
            described = await handle.describe()
    except (RPCError, TimeoutError):
        return wait
    if described.status not in (None, WorkflowExecutionStatus.RUNNING):
        return MessageWait(session_id, message_id, closed=described.status.name)
    queue = described.task_queue
    pollers = await _pollers(client, queue, timeout_s)
    if pollers == 0:
        return MessageWait(session_id, message_id, task_queue=queue, pollers=0)
    try:
        async with asyncio.timeout(timeout_s):
            status, waiting = await asyncio.gather(
                handle.query(names.QUERY_STATUS, result_type=SessionStatus),
                waiting_in(client, session_id),
            )
    except (RPCError, TimeoutError):
        return MessageWait(session_id, message_id, task_queue=queue, pollers=pollers)
    return MessageWait(
        session_id,
        message_id,
        task_queue=queue,
        pollers=pollers,
        status=status,
        held=waiting.tool_calls,
        proposals=waiting.proposals,
    )


async def _pollers(client: Client, task_queue: str, timeout_s: float) -> int | None:
    """Workers polling ``task_queue`` for workflow tasks, or None when the server does not
    say (the time-skipping test server does not implement the call)."""
    request = DescribeTaskQueueRequest(
        namespace=client.namespace,
        task_queue=TaskQueue(name=task_queue),
        task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    )
    try:
        described = await client.workflow_service.describe_task_queue(
            request, timeout=timedelta(seconds=timeout_s)
        )
    except RPCError:
        return None
    return len(described.pollers)
