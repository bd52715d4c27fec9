"""Patch ``sub-agent-calls-wait``: a session whose sub-agent holds a call answers the send
with ``awaiting_approval`` and says so in its status. A run recorded before (its send
answered at the end, its status stayed ``running``) keeps replaying; the same change
without the guard does not."""

from __future__ import annotations

from temporalio.client import WorkflowHistory

from durable_loop.core import names
from durable_loop.core.approvals import UPDATE_DECIDE_TOOL_CALL
from durable_loop.testing.history import EventType, events_of, replay_failures
from durable_loop.workflows.session import SessionWorkflow
from durable_loop.workflows.sub_agent_children import WAIT_PATCH
from tests.versioning.record_sub_agent_wait import HISTORY, SESSION
from tests.versioning.test_patching import patch_markers
from tests.versioning.variants import UnguardedSubAgentWait


def before_change() -> WorkflowHistory:
    return WorkflowHistory.from_json(SESSION, HISTORY.read_text())


def completed_updates(history: WorkflowHistory) -> list[str]:
    """The Updates' names in the order they completed."""
    accepted = {
        request.meta.update_id: request.input.name
        for e in events_of(history, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED)
        if (request := e.workflow_execution_update_accepted_event_attributes.accepted_request)
    }
    return [
        accepted[e.workflow_execution_update_completed_event_attributes.meta.update_id]
        for e in events_of(history, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED)
    ]


def visible_statuses(history: WorkflowHistory) -> list[bytes]:
    upserts = events_of(history, EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES)
    fields = [
        e.upsert_workflow_search_attributes_event_attributes.search_attributes for e in upserts
    ]
    return [
        f.indexed_fields["DurableLoopStatus"].data
        for f in fields
        if "DurableLoopStatus" in f.indexed_fields
    ]


def test_the_history_is_from_before_the_patch():
    history = before_change()
    assert WAIT_PATCH not in patch_markers(history)
    # the send answered only after the decision, and the status never said who waits
    assert completed_updates(history) == [UPDATE_DECIDE_TOOL_CALL, names.UPDATE_SEND_MESSAGE]
    assert b'"awaiting_approval"' not in visible_statuses(history)
    assert b'"running"' in visible_statuses(history)


async def test_it_replays_against_the_patched_workflow():
    assert await replay_failures([before_change()], [SessionWorkflow]) == {}


async def test_the_change_without_the_patch_fails_replay():
    [failure] = (await replay_failures([before_change()], [UnguardedSubAgentWait])).values()
    # the send's Update completes where the history has the decision's accepted
    assert "nondetermin" in failure.lower() or "UpdateMachine" in failure, failure
