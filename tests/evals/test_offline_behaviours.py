"""Every scripted behaviour drives every scenario through the real session workflow: the
baseline shows the quirk failing, the named transform/preset turns it into a pass."""

from __future__ import annotations

import pytest

from durable_loop.evals.behaviours import BEHAVIOURS
from durable_loop.evals.selection import SCENARIOS
from tests.evals.kit import run_offline

TOOL_SCENARIOS = {name for name, s in SCENARIOS.items() if s.uses_tools}
ALL = set(SCENARIOS)

# behaviour -> (scenarios failing at baseline with their reason, scenarios failing when fixed)
EXPECTED: dict[str, tuple[dict[str, str], dict[str, str]]] = {
    "well_behaved": ({}, {}),
    # a call written as text never completes a message, also one of a tool that does not
    # exist (unknown_tool_recovery's state_set, patch reply-unknown-text-call)
    "tags_as_text": (dict.fromkeys(TOOL_SCENARIOS, "REPLY_NOT_AN_ANSWER"), {}),
    "json_as_text": (
        dict.fromkeys(TOOL_SCENARIOS, "REPLY_NOT_AN_ANSWER"),
        # the JSON fallback only recovers calls that name a tool the request offered
        {"unknown_tool_recovery": "REPLY_NOT_AN_ANSWER"},
    ),
    "args_as_objects": (dict.fromkeys(TOOL_SCENARIOS, "PROVIDER_BAD_RESPONSE"), {}),
    "tool_calls_as_object": (dict.fromkeys(TOOL_SCENARIOS, "PROVIDER_BAD_RESPONSE"), {}),
    "legacy_function_call": (dict.fromkeys(TOOL_SCENARIOS, "PROVIDER_BAD_RESPONSE"), {}),
    "empty_finals": (dict.fromkeys(TOOL_SCENARIOS, "EMPTY_FINAL"), {}),
    "repeats_after_result": (dict.fromkeys(TOOL_SCENARIOS, "MAX_TURNS"), {}),
    # every scenario using the workspace tools (which offer an optional workspace_id)
    "fills_placeholder_ids": (
        dict.fromkeys(TOOL_SCENARIOS - {"tool_error_recovery"}, "TOOL_ERROR"),
        {},
    ),
    # every scenario whose first call fails by design
    "gives_up_after_errors": (
        dict.fromkeys(
            {
                "type_error_recovery",
                "long_arguments_guard",
                "unknown_tool_recovery",
                "invalid_json_recovery",
                "tool_error_recovery",
            },
            "TOOL_ERROR",
        ),
        {},
    ),
    # a typed answer in prose fails without a correction turn
    "invalid_json_first": ({"typed_answer": "OUTPUT_INVALID"}, {}),
    # shorten_oversized_arguments shortens the value by one focused request
    "ignores_size_errors": ({"long_arguments_guard": "MAX_TURNS"}, {}),
    "writes_call_after_repeat": (dict.fromkeys(TOOL_SCENARIOS, "REPLY_NOT_AN_ANSWER"), {}),
    "names_the_tool": (
        dict.fromkeys(TOOL_SCENARIOS, "NO_TOOL_CALLS"),
        # it names state_set, which is not offered: no call to ask for
        {"unknown_tool_recovery": "NO_TOOL_CALLS"},
    ),
    # the one scenario that needs a second tool after a successful call
    "stops_after_first_call": ({"happy_path_parallel": "ASSERTION_FAILED"}, {}),
    "refuses_after_invalid_args": ({"type_error_recovery": "TOOL_ERROR"}, {}),
}


def test_every_behaviour_has_an_expectation():
    assert set(EXPECTED) == set(BEHAVIOURS)


async def test_behaviours_fail_at_baseline_and_pass_with_their_fix(
    loop_worker, store_url, scripted_llm
):
    scenarios = list(SCENARIOS.values())
    runs = []
    for b in BEHAVIOURS.values():
        runs.append((b.name, "baseline", b.broken_under, scenarios))
        runs.append((b.name, "production", {**b.broken_under, **b.fix}, scenarios))
    records = await run_offline(loop_worker, store_url, scripted_llm, runs)

    mismatches = []
    for name, (broken, still_failing) in EXPECTED.items():
        for strategy, failing in (("baseline", broken), ("production", still_failing)):
            for scenario in ALL:
                record = records[(f"{name}/{strategy}", scenario)]
                want = failing.get(scenario)
                got = None if record.ok else record.failure
                if got != want:
                    mismatches.append(f"{name}/{strategy}/{scenario}: {got} != {want}")
    assert not mismatches, "\n".join(sorted(mismatches))


@pytest.mark.parametrize("name", [n for n, b in BEHAVIOURS.items() if b.fixed_by])
def test_each_fix_is_named_and_changes_the_runtime(name):
    b = BEHAVIOURS[name]
    assert b.fix, name
    assert b.fix != b.broken_under


async def test_ignoring_implicit_arguments_also_fixes_placeholder_ids(
    loop_worker, store_url, scripted_llm
):
    from durable_loop.core import presets

    workspace_scenarios = [s for n, s in SCENARIOS.items() if n in TOOL_SCENARIOS]
    workspace_scenarios = [s for s in workspace_scenarios if s.name != "tool_error_recovery"]
    runs = [
        (
            "fills_placeholder_ids",
            "ignored",
            presets.ignore_implicit_arguments(),
            workspace_scenarios,
        )
    ]
    records = await run_offline(loop_worker, store_url, scripted_llm, runs)
    failed = {s: r.failure for (_, s), r in records.items() if not r.ok}
    assert failed == {}
    assert all(r.tool_calls for r in records.values())
