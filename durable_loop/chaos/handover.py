"""How long the sessions a dead worker held waited before another worker took them over,
read from their histories.

A session is *held* by the dead worker when, at the kill, its workflow was cached there
(the last workflow task started before the kill was the dead worker's: the next one goes
to that worker's sticky queue and waits out the sticky schedule-to-start timeout) and it
had work after the kill, or
when one of its activities ran there (a retry after the kill whose previous attempt timed
out: the heartbeat timeout, or start-to-close for an activity that does not heartbeat;
the history records only the last attempt's start). The wait of a held session is the
time from the kill to the first task another worker started for it; the timeouts seen
after the kill say which limit bound it.
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


def _timeout_name(kind: int) -> str:
    return TimeoutType.Name(kind).removeprefix("TIMEOUT_TYPE_").lower()  # type: ignore[arg-type]


def _timeout_kind(event: HistoryEvent) -> str | None:
    """The timeout this event records: a workflow task that timed out, or an activity
    attempt whose predecessor timed out (its start carries the previous attempt's failure)."""
    if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT:
        kind = event.workflow_task_timed_out_event_attributes.timeout_type
        return f"workflow_task_{_timeout_name(kind)}"
    if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
        started = event.activity_task_started_event_attributes
        if started.attempt > 1 and started.last_failure.HasField("timeout_failure_info"):
            return (
                f"activity_{_timeout_name(started.last_failure.timeout_failure_info.timeout_type)}"
            )
    if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
        failure = event.activity_task_timed_out_event_attributes.failure
        return f"activity_{_timeout_name(failure.timeout_failure_info.timeout_type)}"
    return None


def session_handover(
    session_id: str, histories: list[WorkflowHistory], dead_pid: int, killed_at: datetime
) -> SessionHandover:
    """``killed_at`` is timezone-aware (UTC); worker identities are ``<pid>@<host>``."""
    dead = f"{dead_pid}@"
    last_workflow_task: str | None = None
    timeouts: dict[str, int] = {}
    first_elsewhere: float | None = None
    in_flight = False
    for event in (e for h in histories for e in h.events):
        at = event.event_time.ToDatetime().replace(tzinfo=killed_at.tzinfo)
        identity = _identity(event)
        if at < killed_at:
            if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED:
                last_workflow_task = identity
            continue
        in_flight = True
        kind = _timeout_kind(event)
        if kind is not None:
            timeouts[kind] = timeouts.get(kind, 0) + 1
        if first_elsewhere is None and identity and not identity.startswith(dead):
            first_elsewhere = round((at - killed_at).total_seconds(), 2)
    held = in_flight and (
        (last_workflow_task or "").startswith(dead)
        or any(k.startswith("activity_") for k in timeouts)
    )
    return SessionHandover(
        session_id=session_id,
        held=held,
        wait_s=first_elsewhere if held else None,
        timeouts=timeouts if held else {},
    )


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
