"""Sessions in flight before the circuit breaker and the budget-crossing rule keep
replaying: their history tried the failing primary on every turn and ran the tool call of
the turn that crossed the budget, and the patched code takes the old path for them."""

from __future__ import annotations

from temporalio.client import WorkflowHistory

from durable_loop.core import names
from durable_loop.testing.history import replay_failures
from tests.versioning.record_fallback_budget import HISTORY
from tests.versioning.test_patching import activity_types, patch_markers
from tests.workflows.test_fallback import llm_summaries


def before_change() -> WorkflowHistory:
    return WorkflowHistory.from_json("fallback-budget-before-change", HISTORY.read_text())


def test_the_history_is_from_before_the_breaker_and_the_budget_rule():
    history = before_change()
    primary_turns = [s for s in llm_summaries(history) if s.startswith("llm: before-primary")]
    assert primary_turns == [f"llm: before-primary turn {n}" for n in (1, 2, 3)]
    assert activity_types(history).count(names.RUN_TOOL) == 2  # the crossing turn's call ran
    assert patch_markers(history) == []


async def test_it_replays_against_the_patched_workflow():
    assert await replay_failures([before_change()]) == {}
