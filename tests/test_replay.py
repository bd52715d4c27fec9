"""Checked-in histories replay against the current workflow code.

A failure here means running sessions would break on deploy. If the change is deliberate,
regenerate the histories with ``.venv/bin/python -m tests.histories.record``.
"""

from __future__ import annotations

import json
from pathlib import Path

from temporalio.client import WorkflowHistory

from durable_loop.testing.history import EventType, replay_failures

HISTORIES = Path(__file__).parent / "histories"


def load(path: Path) -> WorkflowHistory:
    return WorkflowHistory.from_json(path.name.split(".")[0], path.read_text())


def test_the_expected_histories_are_checked_in():
    names = sorted(p.name for p in HISTORIES.glob("*.json"))
    assert {"happy_path.run0.json", "parallel_calls.run0.json"} <= set(names)
    assert {"continue_as_new.run0.json", "continue_as_new.run1.json"} <= set(names)
    assert "tool_approvals.run0.json" in names
    assert "cancelled.run0.json" in names
    assert "typed_output.run0.json" in names
    assert {"sub_agent.run0.json", "sub_agent.child0.run0.json"} <= set(names)
    assert "recoveries.run0.json" in names
    first_run = load(HISTORIES / "continue_as_new.run0.json")
    assert first_run.events[-1].event_type == (
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW
    )


def test_the_recoveries_history_carries_both_patches_and_every_recovery():
    history = load(HISTORIES / "recoveries.run0.json")
    patches, recoveries, repairs = [], [], 0
    for event in history.events:
        if event.event_type == EventType.EVENT_TYPE_MARKER_RECORDED:
            details = event.marker_recorded_event_attributes.details
            if "patch-data" in details:
                patches.append(json.loads(details["patch-data"].payloads[0].data)["id"])
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            name = event.activity_task_scheduled_event_attributes.activity_type.name
            repairs += name == "repair_tool_call"
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED:
            outcome = event.workflow_execution_update_completed_event_attributes.outcome
            recoveries += json.loads(outcome.success.payloads[0].data)["recoveries"]
    assert {"reply-not-a-text-call", "argument-repair"} <= set(patches)
    assert repairs == 2
    assert recoveries == [
        "finalize_text_call_reply",
        "call_referred_tool",
        "repair_invalid_arguments",
        "shorten_oversized_arguments",
    ]


async def test_checked_in_histories_replay():
    histories = [load(p) for p in sorted(HISTORIES.glob("*.json"))]
    assert histories
    assert await replay_failures(histories) == {}
