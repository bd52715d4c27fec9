"""Reading the handover from histories: which sessions the dead worker held, how long
they waited for another worker, and which timeout let them go."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from temporalio.api.enums.v1 import EventType, TimeoutType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import WorkflowHistory

from durable_loop.chaos.handover import session_handover, summarize

KILLED = datetime(2026, 11, 25, 12, 0, 0, tzinfo=UTC)
DEAD, ALIVE = "111@host", "222@host"


def at(seconds: float) -> datetime:
    return (KILLED + timedelta(seconds=seconds)).replace(tzinfo=None)


def workflow_task(seconds: float, identity: str) -> HistoryEvent:
    event = HistoryEvent(event_type=EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED)
    event.event_time.FromDatetime(at(seconds))
    event.workflow_task_started_event_attributes.identity = identity
    return event


def sticky_timeout(seconds: float) -> HistoryEvent:
    event = HistoryEvent(event_type=EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT)
    event.event_time.FromDatetime(at(seconds))
    event.workflow_task_timed_out_event_attributes.timeout_type = (
        TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_START
    )
    return event


def activity_retry(seconds: float, identity: str) -> HistoryEvent:
    """The only start the history keeps: the attempt after the one that timed out."""
    event = HistoryEvent(event_type=EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED)
    event.event_time.FromDatetime(at(seconds))
    started = event.activity_task_started_event_attributes
    started.identity, started.attempt = identity, 2
    started.last_failure.timeout_failure_info.timeout_type = TimeoutType.TIMEOUT_TYPE_HEARTBEAT
    return event


def history(*events: HistoryEvent) -> list[WorkflowHistory]:
    return [WorkflowHistory(workflow_id="wf", events=list(events))]


def test_a_session_cached_on_the_dead_worker_waits_out_the_sticky_timeout():
    events = history(workflow_task(-1, DEAD), sticky_timeout(10), workflow_task(10.5, ALIVE))
    handover = session_handover("s", events, 111, KILLED)
    assert handover.held and handover.wait_s == 10.5
    assert handover.timeouts == {"workflow_task_schedule_to_start": 1}


def test_an_activity_cut_off_on_the_dead_worker_is_retried_after_its_heartbeat_timeout():
    events = history(workflow_task(-2, ALIVE), activity_retry(2.2, ALIVE))
    handover = session_handover("s", events, 111, KILLED)
    assert handover.held and handover.wait_s == 2.2
    assert handover.timeouts == {"activity_heartbeat": 1}


def test_sessions_elsewhere_or_idle_at_the_kill_were_not_held():
    elsewhere = session_handover(
        "a", history(workflow_task(-1, ALIVE), workflow_task(1, ALIVE)), 111, KILLED
    )
    idle = session_handover("b", history(workflow_task(-1, DEAD)), 111, KILLED)
    assert not elsewhere.held and not idle.held
    summary = summarize([elsewhere, idle])
    assert summary.held_sessions == 0 and summary.wait_max_s is None


def test_the_summary_gives_the_median_and_the_longest_wait():
    held = [
        session_handover(
            f"s{i}", history(workflow_task(-1, DEAD), workflow_task(wait, ALIVE)), 111, KILLED
        )
        for i, wait in enumerate((2.0, 3.0, 9.0))
    ]
    summary = summarize(held)
    assert (summary.held_sessions, summary.wait_p50_s, summary.wait_max_s) == (3, 3.0, 9.0)
