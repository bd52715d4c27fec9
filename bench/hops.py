"""Where a turn's time goes, read from real workflow histories: round trips per LLM call
(activities, local activities, workflow tasks) and the server-side durations of each hop
(queue wait = scheduled -> started, run = started -> completed)."""

from __future__ import annotations

import statistics
from collections import defaultdict

from pydantic import BaseModel
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowHistory

E = EventType


class HopProfile(BaseModel):
    llm_calls: int
    per_llm_call: dict[str, float]
    """Activities scheduled (by type), local activities (markers), workflow tasks."""
    median_ms: dict[str, float]
    """Median milliseconds per hop: '<activity> queue', '<activity> run', 'workflow task
    queue', 'workflow task run'."""


def _ms(a: int, b: int) -> float:
    return (b - a) / 1e6


def profile(histories: list[WorkflowHistory], llm_activity: str) -> HopProfile:
    counts: dict[str, int] = defaultdict(int)
    durations: dict[str, list[float]] = defaultdict(list)
    for history in histories:
        scheduled: dict[int, tuple[str, int]] = {}
        started: dict[int, int] = {}
        wft_scheduled = wft_started = 0
        for event in history.events:
            at = event.event_time.ToNanoseconds()
            kind = event.event_type
            if kind == E.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
                name = event.activity_task_scheduled_event_attributes.activity_type.name
                scheduled[event.event_id] = (name, at)
                counts[name] += 1
            elif kind == E.EVENT_TYPE_ACTIVITY_TASK_STARTED:
                attrs = event.activity_task_started_event_attributes
                name, s_at = scheduled[attrs.scheduled_event_id]
                started[attrs.scheduled_event_id] = at
                durations[f"{name} queue"].append(_ms(s_at, at))
            elif kind == E.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
                sid = event.activity_task_completed_event_attributes.scheduled_event_id
                name, _ = scheduled[sid]
                if sid in started:
                    durations[f"{name} run"].append(_ms(started[sid], at))
            elif kind == E.EVENT_TYPE_MARKER_RECORDED:
                counts["local activities"] += 1
            elif kind == E.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
                wft_scheduled = at
            elif kind == E.EVENT_TYPE_WORKFLOW_TASK_STARTED:
                wft_started = at
                durations["workflow task queue"].append(_ms(wft_scheduled, at))
            elif kind == E.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
                counts["workflow tasks"] += 1
                durations["workflow task run"].append(_ms(wft_started, at))
    llm_calls = counts.get(llm_activity, 0)
    per_call = {k: round(v / llm_calls, 2) for k, v in sorted(counts.items())} if llm_calls else {}
    medians = {k: round(statistics.median(v), 2) for k, v in sorted(durations.items()) if v}
    return HopProfile(llm_calls=llm_calls, per_llm_call=per_call, median_ms=medians)
