"""Patch ``cancel-parked``: a cancel of a message parked on held calls settles them as
cancelled and ends the message. A run recorded before (the cancel Signal was dropped, the
call was approved later and ran) keeps replaying; the same change without the guard does
not."""

from __future__ import annotations

from temporalio.client import WorkflowHistory

from durable_loop.core import names
from durable_loop.testing.history import EventType, events_of, replay_failures
from durable_loop.workflows.run_control import PARKED_PATCH_ID
from durable_loop.workflows.session import SessionWorkflow
from tests.versioning.record_cancel_parked import HISTORY, SESSION
from tests.versioning.test_patching import patch_markers
from tests.versioning.variants import UnguardedCancelParked


def before_change() -> WorkflowHistory:
    return WorkflowHistory.from_json(SESSION, HISTORY.read_text())


def test_the_history_is_from_before_the_patch():
    history = before_change()
    assert PARKED_PATCH_ID not in patch_markers(history)
    signals = events_of(history, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED)
    names_sent = [e.workflow_execution_signaled_event_attributes.signal_name for e in signals]
    assert names.SIGNAL_CANCEL_MESSAGE in names_sent


async def test_it_replays_against_the_patched_workflow():
    assert await replay_failures([before_change()], [SessionWorkflow]) == {}


async def test_the_change_without_the_patch_fails_replay():
    [failure] = (await replay_failures([before_change()], [UnguardedCancelParked])).values()
    assert "nondetermin" in failure.lower(), failure
