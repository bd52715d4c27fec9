"""How long the sessions a dead worker held waited before another worker took them over,
read from their histories.

A session is *held* by a worker when that worker started one of its workflow or activity
tasks. After the worker dies, the session is stuck until Temporal gives up on it: a task
on the dead worker's sticky queue waits for the sticky schedule-to-start timeout, an
activity it was running waits for its heartbeat (or start-to-close) timeout. The wait of a
held session is the time from the kill to the first task a surviving worker started for
it; the timeouts seen on the way say which limit bound it.
"""

from __future__ import annotations

import statistics
from datetime import datetime

from pydantic import BaseModel, Field
from temporalio.api.enums.v1 import EventType, TimeoutType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import WorkflowHistory

STARTED = {
    EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED: "workflow_task_started_event_attributes",
    EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED: "activity_task_started_event_attributes",
}


class SessionHandover(BaseModel):
    session_id: str
    held: bool = Field(description="The dead worker started a task of this session")
    wait_s: float | None = Field(
        default=None, description="Kill to the first task a surviving worker started"
    )
    timeouts: dict[str, int] = Field(
        default_factory=dict, description="Timeouts after the kill, e.g. sticky/heartbeat"
    )


class Handover(BaseModel):
    held_sessions: int
    wait_p50_s: float | None
    wait_max_s: float | None
    timeouts: dict[str, int]


def _identity(event: HistoryEvent) -> str | None:
    attr = STARTED.get(event.event_type)
    return getattr(event, attr).identity if attr else None


def _timeout_kind(event: HistoryEvent) -> str | None:
    if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT:
        kind = event.workflow_task_timed_out_event_attributes.timeout_type
        return f"workflow_task_{TimeoutType.Name(kind).removeprefix('TIMEOUT_TYPE_').lower()}"
    if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
        failure = event.activity_task_timed_out_event_attributes.failure
        kind = failure.timeout_failure_info.timeout_type
        return f"activity_{TimeoutType.Name(kind).removeprefix('TIMEOUT_TYPE_').lower()}"
    return None


def session_handover(
    session_id: str, histories: list[WorkflowHistory], dead_pid: int, killed_at: datetime
) -> SessionHandover:
    """``killed_at`` is timezone-aware (UTC); worker identities are ``<pid>@<host>``."""
    dead = f"{dead_pid}@"
    events = [e for h in histories for e in h.events]
    held = any((_identity(e) or "").startswith(dead) for e in events)
    out = SessionHandover(session_id=session_id, held=held)
    for event in events:
        at = event.event_time.ToDatetime().replace(tzinfo=killed_at.tzinfo)
        if at < killed_at:
            continue
        kind = _timeout_kind(event)
        if kind is not None:
            out.timeouts[kind] = out.timeouts.get(kind, 0) + 1
        identity = _identity(event)
        if held and out.wait_s is None and identity and not identity.startswith(dead):
            out.wait_s = round((at - killed_at).total_seconds(), 2)
    return out


def summarize(sessions: list[SessionHandover]) -> Handover:
    held = [s for s in sessions if s.held]
    waits = [s.wait_s for s in held if s.wait_s is not None]
    timeouts: dict[str, int] = {}
    for s in held:
        for kind, n in s.timeouts.items():
            timeouts[kind] = timeouts.get(kind, 0) + n
    return Handover(
        held_sessions=len(held),
        wait_p50_s=round(statistics.median(waits), 2) if waits else None,
        wait_max_s=max(waits) if waits else None,
        timeouts=timeouts,
    )
