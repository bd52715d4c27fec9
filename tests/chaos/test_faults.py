"""Fault injection (marker ``chaos``): each scenario kills or breaks something real, then
every session it started is checked: ended correctly, no duplicate side effect, no fact
without confirmation, nothing half-written, every run replays."""

from __future__ import annotations

import pytest

from durable_loop.chaos.report import ChaosReport, problems_of
from durable_loop.chaos.run import select
from durable_loop.chaos.scenario import run_scenario

pytestmark = pytest.mark.chaos


async def run(rig, name: str):
    result = await run_scenario(rig, name)
    assert result.ok, "\n".join(problems_of(result))
    assert result.faults and sum(result.faults.values()) >= 1
    assert result.survived == len(result.sessions) >= 1
    assert result.duplicates == 0
    return result


async def test_worker_killed_mid_llm_call_retries_the_call(chaos_rig):
    result = await run(chaos_rig, "kill_worker_mid_llm")
    assert result.details["llm_requests"] >= 3  # held, retried, answered
    assert result.side_effects == 1


async def test_worker_killed_inside_a_tool_does_not_repeat_its_side_effect(chaos_rig):
    result = await run(chaos_rig, "kill_worker_mid_tool")
    assert result.details["transfer_attempts"][:2] == [1, 2]
    assert result.tool_invocations >= 2 and result.side_effects == 1


async def test_worker_killed_during_a_cancellation_still_ends_it_cancelled(chaos_rig):
    result = await run(chaos_rig, "kill_worker_during_cancel")
    assert result.checks[0].clean and result.checks[0].runs >= 1


async def test_messages_sent_while_the_worker_is_down_are_processed_on_return(chaos_rig):
    result = await run(chaos_rig, "message_while_worker_down")
    assert len(result.sessions) == 2


async def test_server_restart_mid_session_loses_nothing(chaos_rig):
    result = await run(chaos_rig, "server_restart_mid_session")
    assert result.faults == {
        "dev server SIGKILL + restart during an LLM call": 1,
        "dev server graceful restart between messages": 1,
    }


async def test_facts_change_only_on_confirmation(chaos_rig):
    await run(chaos_rig, "facts_need_confirmation")


async def test_provider_faults_are_retried_or_coded(chaos_rig):
    result = await run(chaos_rig, "provider_faults")
    assert len(result.faults) == 6
    assert result.details["retry_after_waited_s"] >= 0.9


async def test_hostile_tools_become_coded_errors(chaos_rig):
    result = await run(chaos_rig, "tool_faults")
    assert set(result.faults) == {"tool hangs", "tool raises", "tool returns non-JSON"}


def test_report_counts_add_up_and_flag_duplicates():
    from durable_loop.chaos.report import ScenarioResult

    clean = ScenarioResult(name="a", description="", faults={"x": 2}, sessions=["s"], survived=1)
    dup = ScenarioResult(
        name="b", description="", faults={"y": 1}, sessions=["t"], survived=1, duplicates=1
    )
    report = ChaosReport.of([clean, dup], wall_s=1.0)
    assert (report.faults_injected, report.sessions_survived, report.duplicates) == (3, 2, 1)
    assert not report.ok
    assert any("FAILED" in line for line in report.lines())


def test_unknown_scenario_is_a_coded_error():
    with pytest.raises(ValueError, match="UNKNOWN_SCENARIO"):
        select(["no_such_scenario"])


async def test_an_approved_call_runs_once_when_the_worker_dies_before_it_runs(chaos_rig):
    result = await run(chaos_rig, "approved_call_worker_killed_before_run")
    assert result.side_effects == 1


async def test_an_approved_call_runs_once_when_the_worker_dies_after_it_ran(chaos_rig):
    result = await run(chaos_rig, "approved_call_worker_killed_after_tool")
    assert result.details["transfer_attempts"][:2] == [1, 2]
    assert result.side_effects == 1


async def test_a_held_call_survives_a_server_restart_and_runs_once_approved(chaos_rig):
    result = await run(chaos_rig, "approval_survives_server_restart")
    assert result.side_effects == 1


async def test_a_keyless_once_call_killed_in_its_body_is_settled_by_a_person_not_twice(
    chaos_rig,
):
    result = await run(chaos_rig, "once_call_worker_killed_in_body")
    assert result.details["notify_attempts"] == [1] and result.side_effects == 1
    assert result.details["in_doubt_raised"] == 1
    assert result.details["settled_by_person"] == "happened"


async def test_a_once_call_killed_in_its_body_is_settled_by_its_reconcile_check(chaos_rig):
    result = await run(chaos_rig, "once_call_reconciled_after_kill")
    assert result.details["notify_checked_attempts"] == [1] and result.side_effects == 1


async def test_a_once_call_killed_three_times_before_its_effect_goes_out_once(chaos_rig):
    result = await run(chaos_rig, "once_call_killed_three_times_before_its_effect")
    assert len(result.details["notify_checked_attempts"]) == 4 and result.side_effects == 1


async def test_a_once_call_whose_reconcile_check_fails_stays_in_doubt(chaos_rig):
    result = await run(chaos_rig, "once_call_reconcile_fails")
    assert result.details["notify_checked_attempts"] == [1] and result.side_effects == 1
    assert result.details["settled_by_person"] == "give_up"


async def test_a_once_call_in_doubt_run_again_by_a_person_goes_out_once(chaos_rig):
    result = await run(chaos_rig, "once_call_run_again_after_kill")
    assert len(result.details["notify_checked_attempts"]) == 2 and result.side_effects == 1
    assert result.details["settled_by_person"] == "run_again"
