"""Patch ``decision-rules``: decisions bound to the hold they were shown, printable approver
names, bounded comments, edits in the tool's types, refusals audited on every channel and
the deadline in event order. A run recorded before it (an Update approving as
``ali\\x07ce`` with the fingerprint of tool and arguments alone) keeps replaying; the same
change without the guard does not."""

from __future__ import annotations

import json

from temporalio.client import WorkflowHistory

from durable_loop.testing.history import replay_failures
from durable_loop.workflows.proposals import DECISION_RULES_PATCH
from durable_loop.workflows.session import SessionWorkflow
from tests.versioning.record_decision_rules import APPROVER, HISTORY, SESSION
from tests.versioning.test_patching import patch_markers
from tests.versioning.variants import UnguardedDecisionRules
from tests.workflows.approval_kit import payload_text


def before_change() -> WorkflowHistory:
    return WorkflowHistory.from_json(SESSION, HISTORY.read_text())


def test_the_history_is_from_before_the_patch():
    history = before_change()
    markers = patch_markers(history)
    assert DECISION_RULES_PATCH not in markers and "keep-held-decisions" in markers
    assert json.dumps({"approver": APPROVER})[1:-1].replace(" ", "") in payload_text([history])


async def test_it_replays_against_the_patched_workflow():
    assert await replay_failures([before_change()], [SessionWorkflow]) == {}


async def test_the_change_without_the_patch_fails_replay():
    [failure] = (await replay_failures([before_change()], [UnguardedDecisionRules])).values()
    assert "nondetermin" in failure.lower(), failure
