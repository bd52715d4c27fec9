"""The offline tool-approval scenario: a scripted approver confirms, edits and rejects
three calls of a gated tool; the transcript, the audit rows and the executions match."""

from __future__ import annotations

from durable_loop.evals.scenarios_approvals import APPROVAL_GATE, payments_of
from durable_loop.evals.selection import SCENARIOS, select_scenarios
from tests.evals.kit import run_offline


async def test_a_person_confirms_edits_and_rejects(loop_worker, store_url, scripted_llm):
    records = await run_offline(
        loop_worker, store_url, scripted_llm, [("well_behaved", "tool_loop", {}, [APPROVAL_GATE])]
    )
    [record] = records.values()
    assert record.ok, record.problems
    assert record.status == "completed" and record.tool_calls == 3
    assert sorted(payments_of(record.session_id)) == [("A-1", 120), ("B-2", 250)]


def test_the_scenario_is_selected_by_name_and_not_by_presets():
    assert select_scenarios("approval_gate") == [APPROVAL_GATE]
    assert "approval_gate" not in SCENARIOS
    assert APPROVAL_GATE not in select_scenarios("all")
