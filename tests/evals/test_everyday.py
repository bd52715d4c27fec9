"""The everyday scenarios offline: the scripted models reproduce the bad patterns of
issue 18 (a call written as text after the repeat guard, "use the `note_list` function",
a refusal after a fixable INVALID_ARGS); the named recoveries turn them into answers."""

from __future__ import annotations

from durable_loop.core import presets
from durable_loop.evals.behaviours import BEHAVIOURS
from durable_loop.evals.scenarios_everyday import BASICS
from durable_loop.evals.selection import EVERYDAY_SCENARIOS, select_scenarios
from tests.evals.kit import run_offline

EVERYDAY = list(BASICS)
CALLING = {"everyday_arithmetic", "everyday_two_step", "everyday_save_then_list"}
ANSWERED_FROM_A_RESULT = {*CALLING, "everyday_fixable_error", "everyday_quote_result"}

# behaviour -> scenarios failing at baseline with their reason (every one passes when fixed)
EXPECTED: dict[str, dict[str, str]] = {
    "well_behaved": {},
    "writes_call_after_repeat": dict.fromkeys(ANSWERED_FROM_A_RESULT, "REPLY_NOT_AN_ANSWER"),
    "names_the_tool": {
        **dict.fromkeys(ANSWERED_FROM_A_RESULT, "NO_TOOL_CALLS"),
        "everyday_impossible": "ASSERTION_FAILED",
    },
    "refuses_after_invalid_args": {"everyday_fixable_error": "TOOL_ERROR"},
}
STILL_FAILING = {
    # the repeat guard withdraws tools for the rest of the message: after repeating
    # note_add the model answers without the note_list step (a limit of the guard)
    ("writes_call_after_repeat", "everyday_save_then_list"): "ASSERTION_FAILED",
}
LOCAL_PRODUCTION = presets.for_model("openai", "qwen2.5-coder-1.5b-instruct")
# the production preset asks for the answer before the model can repeat (a request the
# calls carried whole), or in the repeat turn, before any text call
PRODUCTION_FIXERS = {"writes_call_after_repeat": ("finalize_when_done", "finalize_after_repeat")}


def test_the_everyday_preset_selects_the_everyday_set():
    assert [s.name for s in select_scenarios("everyday")] == list(EVERYDAY_SCENARIOS)
    assert select_scenarios("everyday_chit_chat")[0].name == "everyday_chit_chat"
    assert not set(EVERYDAY_SCENARIOS) & {s.name for s in select_scenarios("all")}


async def test_everyday_bad_patterns_fail_at_baseline_and_recover_when_fixed(
    loop_worker, store_url, scripted_llm
):
    runs = []
    for name in EXPECTED:
        b = BEHAVIOURS[name]
        runs.append((name, "baseline", b.broken_under, EVERYDAY))
        runs.append((name, "fixed", {**b.broken_under, **b.fix}, EVERYDAY))
        runs.append((name, "production", LOCAL_PRODUCTION, EVERYDAY))
    records = await run_offline(loop_worker, store_url, scripted_llm, runs)

    mismatches = []
    for name, broken in EXPECTED.items():
        fixer = BEHAVIOURS[name].fixed_by
        for strategy in ("baseline", "fixed", "production"):
            for scenario in (s.name for s in BASICS):
                record = records[(f"{name}/{strategy}", scenario)]
                still = STILL_FAILING.get((name, scenario))
                want = broken.get(scenario) if strategy == "baseline" else still
                got = None if record.ok else record.failure
                if got != want:
                    mismatches.append(f"{name}/{strategy}/{scenario}: {got} != {want}")
                if strategy != "baseline" and want is None and scenario in broken:
                    used = (
                        PRODUCTION_FIXERS.get(name, (fixer,))
                        if strategy == "production"
                        else (fixer,)
                    )
                    assert set(used) & set(record.recoveries), (name, strategy, scenario)
    assert not mismatches, "\n".join(sorted(mismatches))
