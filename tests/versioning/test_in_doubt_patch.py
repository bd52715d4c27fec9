"""Patch ``in-doubt-to-person``: a call of an ``effect="once"`` tool found in doubt is held
for a person's answer instead of ending ``TOOL_CALL_IN_DOUBT``. A run recorded before it
(the call's final result is TOOL_CALL_IN_DOUBT, the model read it) keeps replaying: the
old branch asks the tool activity for a stored failure (``doubt_to_person`` False), and the
history's activity result says the call is settled, so no hold is made."""

from __future__ import annotations

from temporalio.client import WorkflowHistory

from durable_loop.core.approval_models import PATCH_IN_DOUBT
from durable_loop.testing.history import replay_failures
from durable_loop.workflows.session import SessionWorkflow
from tests.versioning.record_in_doubt import HISTORY, SESSION
from tests.versioning.test_patching import patch_markers
from tests.workflows.approval_kit import payload_text


def before_change() -> WorkflowHistory:
    return WorkflowHistory.from_json(SESSION, HISTORY.read_text())


def test_the_history_is_from_before_the_patch():
    history = before_change()
    assert PATCH_IN_DOUBT not in patch_markers(history)
    text = payload_text([history])
    assert "TOOL_CALL_IN_DOUBT" in text and "doubt_to_person" not in text


async def test_it_replays_against_the_patched_workflow():
    assert await replay_failures([before_change()], [SessionWorkflow]) == {}
