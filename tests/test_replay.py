"""Checked-in histories replay against the current workflow code.

A failure here means running sessions would break on deploy. If the change is deliberate,
regenerate the histories with ``.venv/bin/python -m tests.histories.record``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from temporalio.client import WorkflowHistory

from durable_loop.testing.history import EventType, replay_failures
from durable_loop.workflows.run_start_patches import PATCH_ID as RUN_START_PATCH
from durable_loop.workflows.run_start_patches import RUN_START_PATCHES

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
    patched = {"requested_tool.run0.json", "routed_tool.run0.json", "router_clarify.run0.json"}
    patched |= {"unasked_call.run0.json", "unsaid_values.run0.json", "done_at_once.run0.json"}
    patched |= {"unknown_tool_repeat.run0.json", "continue_after_repeat.run0.json"}
    patched |= {"continue_after_repeat_narrowed.run0.json"}
    assert patched <= set(names)
    first_run = load(HISTORIES / "continue_as_new.run0.json")
    assert first_run.events[-1].event_type == (
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW
    )


@dataclass
class Recorded:
    """What a checked-in history shows: patch markers, scheduled activities, and per
    message its recoveries and (router pipeline) route."""

    patches: list[str] = field(default_factory=list)
    activities: list[str] = field(default_factory=list)
    recoveries: list[str] = field(default_factory=list)
    routes: list[str] = field(default_factory=list)


def recorded(name: str) -> Recorded:
    seen = Recorded()
    for event in load(HISTORIES / name).events:
        if event.event_type == EventType.EVENT_TYPE_MARKER_RECORDED:
            details = event.marker_recorded_event_attributes.details
            if "patch-data" in details:
                seen.patches.append(json.loads(details["patch-data"].payloads[0].data)["id"])
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            seen.activities.append(
                event.activity_task_scheduled_event_attributes.activity_type.name
            )
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED:
            outcome = event.workflow_execution_update_completed_event_attributes.outcome
            result = json.loads(outcome.success.payloads[0].data)
            seen.recoveries += result["recoveries"]
            if result.get("pipeline"):
                seen.routes.append(result["pipeline"]["choice"])
    return seen


def test_the_recoveries_history_carries_both_patches_and_every_recovery():
    seen = recorded("recoveries.run0.json")
    assert {"reply-not-a-text-call", "argument-repair"} <= set(seen.patches)
    assert seen.activities.count("repair_tool_call") == 2
    assert seen.recoveries == [
        "finalize_text_call_reply",
        "call_referred_tool",
        "repair_invalid_arguments",
        "shorten_oversized_arguments",
    ]


def test_the_histories_of_patched_recoveries_carry_their_patches():
    requested = recorded("requested_tool.run0.json")
    assert "call-requested-tool" in requested.patches
    assert requested.recoveries == ["call_requested_tool"]
    routed = recorded("routed_tool.run0.json")
    assert "call-routed-tool" in routed.patches and "call-requested-tool" not in routed.patches
    assert routed.recoveries == ["call_requested_tool"]
    not_named = recorded("routed_tool_not_named.run0.json")
    assert "call-routed-tool-it-names" in not_named.patches
    assert "call-routed-tool" not in not_named.patches and not_named.recoveries == []
    made_up = recorded("routed_tool_made_up.run0.json")
    assert "call-routed-tool-after-offered-call" in made_up.patches
    assert "call-routed-tool" not in made_up.patches and made_up.recoveries == []
    referral = recorded("referred_tool_made_up.run0.json")
    assert "call-referred-tool-after-offered-call" in referral.patches
    assert referral.recoveries == [] and referral.activities.count("run_tool") == 0
    unasked = recorded("unasked_call.run0.json")
    assert "refuse-unasked-call" in unasked.patches
    assert unasked.recoveries == ["refuse_unasked_call"]
    assert unasked.activities.count("run_tool") == 1
    unsaid = recorded("unsaid_values.run0.json")
    assert "ask-for-unsaid-values" in unsaid.patches
    assert unsaid.recoveries == ["ask_for_unsaid_values"]
    assert unsaid.activities.count("run_tool") == 1
    done = recorded("done_at_once.run0.json")
    assert "finalize-when-done" in done.patches
    assert done.recoveries == ["finalize_when_done", "finalize_when_done"]
    assert done.activities.count("run_tool") == 3
    made_up = recorded("unknown_tool_repeat.run0.json")
    assert "repeat-unknown-tool-call" in made_up.patches
    assert made_up.recoveries == ["finalize_after_repeat"]
    assert made_up.activities.count("run_tool") == 0
    carried_on = recorded("continue_after_repeat.run0.json")
    assert "continue-after-repeat" in carried_on.patches
    assert carried_on.recoveries == ["continue_after_repeat", "finalize_when_done"]
    assert carried_on.activities.count("run_tool") == 2
    assert "continue-after-repeat-narrowed" not in carried_on.patches
    narrowed = recorded("continue_after_repeat_narrowed.run0.json")
    assert "continue-after-repeat-narrowed" in narrowed.patches
    assert "continue-after-repeat" not in narrowed.patches
    assert narrowed.recoveries == ["finalize_after_repeat", "finalize_after_repeat"]
    assert narrowed.activities.count("run_tool") == 1
    router = recorded("router_clarify.run0.json")
    assert "router-clarify-checked" in router.patches
    assert router.routes == ["call_tool", "clarify", "none"]


def test_a_run_from_after_the_run_start_gate_asks_those_patches_first_and_once():
    """``workflows/run_start_patches.py``; the other histories are from before the gate and
    replay asking each patch where they always did."""
    gated = recorded("run_start_patches.run0.json")
    assert gated.patches[: 1 + len(RUN_START_PATCHES)] == [RUN_START_PATCH, *RUN_START_PATCHES]
    assert len(gated.patches) == len(set(gated.patches))
    assert gated.recoveries == ["finalize_when_done"]
    assert RUN_START_PATCH not in recorded("done_at_once.run0.json").patches


async def test_checked_in_histories_replay():
    histories = [load(p) for p in sorted(HISTORIES.glob("*.json"))]
    assert histories
    assert await replay_failures(histories) == {}
