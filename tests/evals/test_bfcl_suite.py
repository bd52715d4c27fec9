"""The BFCL suite end to end against the scripted endpoint: entries of each kind run as
real sessions, answered right and wrong, scored by BFCL's own checkers."""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any

import pytest

pytest.importorskip("bfcl_eval", reason="bfcl-eval is not installed (make bfcl)")

from durable_loop.cli.errors import CliError
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.tool_names import TOOL_NAME_PATTERN
from durable_loop.evals.behaviours import behaviour
from durable_loop.evals.bfcl.entries import CATEGORIES, entries
from durable_loop.evals.bfcl.package import load_bfcl
from durable_loop.evals.bfcl.report import scores
from durable_loop.evals.bfcl.suite import (
    BfclSelection,
    EntryRun,
    Recorders,
    entry_run,
    run_entry_jobs,
    select,
)
from durable_loop.evals.bfcl.tools import entry_specs
from durable_loop.evals.plan import OFFLINE_RETRY, job_settings, offline_jobs
from durable_loop.evals.runner import Job
from durable_loop.evals.scenario import DONE, view_of
from durable_loop.evals.schema import RunRecord
from durable_loop.testing import ScriptedLLM, reply

BFCL = load_bfcl()


def run_of(recorders: Recorders, category: str, entry_id: str) -> EntryRun:
    entry = next(e for e in entries(BFCL, category) if e.id == entry_id)
    return entry_run(BFCL, entry, recorders)


def right_calls(run: EntryRun) -> list[tuple[str, Any]]:
    """The scripted model's calls for BFCL's answer (the policy the behaviours replay)."""
    action = run.scenario.policy(_no_results())
    return [(call.name, call.arguments) for call in action.calls]


def _no_results() -> Any:
    return view_of([{"role": "user", "content": "?"}], tools_sent=True)


def job(llm: ScriptedLLM, case: str, run: EntryRun, *replies: Any) -> Job:
    model = f"bfcl-{uuid.uuid4().hex[:8]}"
    llm.script(model, list(replies), then=reply.text(DONE))
    endpoint = LlmEndpoint(model=model, base_url=llm.base_url, timeout_s=10.0, retry=OFFLINE_RETRY)
    return Job(
        scenario=run.scenario,
        settings=job_settings(endpoint, run.scenario, {}),
        model=case,
        provider="scripted",
        profile="scripted",
        strategy="baseline",
        trial=1,
        timeout_s=60.0,
    )


def test_every_entry_registers_its_functions_under_provider_safe_names():
    for category in CATEGORIES:
        for entry in entries(BFCL, category):
            specs = entry_specs(BFCL, entry)
            assert len({s.name for s in specs}) == len(entry.functions), entry.id
            for spec, function in zip(specs, entry.functions, strict=True):
                assert TOOL_NAME_PATTERN.fullmatch(spec.name)
                assert (spec.original_name or spec.name) == function["name"]


async def test_entries_of_each_kind_are_scored_by_bfcl_from_the_calls_executed():
    log = Recorders()
    simple = run_of(log, "simple_python", "simple_python_0")
    capitals = run_of(log, "simple_python", "simple_python_53")
    dotted = run_of(log, "multiple", "multiple_0")
    parallel = run_of(log, "parallel", "parallel_0")
    parallel_multiple = run_of(log, "parallel_multiple", "parallel_multiple_5")
    irrelevance = run_of(log, "irrelevance", "irrelevance_9")
    live_system = run_of(log, "live_simple", "live_simple_58-27-0")
    live_capitals = run_of(log, "live_multiple", "live_multiple_0-0-0")
    relevance = run_of(log, "live_relevance", "live_relevance_0-0-0")
    live_irrelevance = run_of(log, "live_irrelevance", "live_irrelevance_0-0-0")
    multi_turn = run_of(log, "multi_turn_base", "multi_turn_base_0")
    runs = [
        simple,
        capitals,
        dotted,
        parallel,
        parallel_multiple,
        irrelevance,
        live_system,
        live_capitals,
        relevance,
        live_irrelevance,
        multi_turn,
    ]
    assert dotted.specs[0].name == "triangle_properties_get"
    assert dotted.specs[0].original_name == "triangle_properties.get"
    assert capitals.specs[0].name == "fetch_DNA_sequence" and not capitals.specs[0].original_name
    assert live_system.entry.system_prompt
    first, second = right_calls(parallel)
    with ScriptedLLM() as llm:
        expected = {
            "simple_right": True,
            "simple_wrong": False,
            "capitals_right": True,
            "dotted_right": True,
            "dotted_wrong_function": False,
            "parallel_right": True,
            "parallel_over_two_turns": True,
            "parallel_one_missing": False,
            "parallel_multiple_right": True,
            "irrelevance_no_call": True,
            "irrelevance_called": False,
            "live_system_right": True,
            "live_capitals_right": True,
            "relevance_called": True,
            "relevance_no_call": False,
            "live_irrelevance_no_call": True,
            "multi_turn_right": True,
            "multi_turn_no_calls": False,
        }
        tax = irrelevance.specs[0]
        tax_args = {name: 1000 for name in tax.parameters.get("required", [])}  # type: ignore[union-attr]
        jobs = [
            job(llm, "simple_right", simple, reply.tool_call(*right_calls(simple)[0])),
            job(
                llm,
                "simple_wrong",
                simple,
                reply.tool_call("calculate_triangle_area", {"base": 11, "height": 5}),
            ),
            job(llm, "capitals_right", capitals, reply.tool_calls(*right_calls(capitals))),
            job(llm, "dotted_right", dotted, reply.tool_calls(*right_calls(dotted))),
            job(
                llm,
                "dotted_wrong_function",
                dotted,
                reply.tool_call("circle_properties_get", {"radius": 3}),
            ),
            job(llm, "parallel_right", parallel, reply.tool_calls(first, second)),
            job(
                llm,
                "parallel_over_two_turns",
                parallel,
                reply.tool_call(*first),
                reply.tool_call(*second),
            ),
            job(llm, "parallel_one_missing", parallel, reply.tool_call(*first)),
            job(
                llm,
                "parallel_multiple_right",
                parallel_multiple,
                reply.tool_calls(*right_calls(parallel_multiple)),
            ),
            job(llm, "irrelevance_no_call", irrelevance, reply.text("I cannot tell.")),
            job(llm, "irrelevance_called", irrelevance, reply.tool_call(tax.name, tax_args)),
            job(llm, "live_system_right", live_system, reply.tool_calls(*right_calls(live_system))),
            job(
                llm,
                "live_capitals_right",
                live_capitals,
                reply.tool_calls(*right_calls(live_capitals)),
            ),
            job(
                llm,
                "relevance_called",
                relevance,
                reply.tool_call("search_engine_query", {"prompt": "news"}),
            ),
            job(llm, "relevance_no_call", relevance, reply.text("Here you are.")),
            job(llm, "live_irrelevance_no_call", live_irrelevance, reply.text("No.")),
            job(llm, "multi_turn_no_calls", multi_turn),
        ]
        (played,) = offline_jobs(
            [multi_turn.scenario], behaviour("well_behaved"), llm, strategy="baseline", update={}
        )
        jobs.append(dataclasses.replace(played, model="multi_turn_right"))
        records = await run_entry_jobs(
            BFCL, runs, jobs, log, kind="timeskip", environ={}, parallel=4
        )
    got = {r.model: r for r in records}
    assert {case: got[case].ok for case in expected} == expected, {
        case: got[case].problems for case in expected if got[case].ok != expected[case]
    }
    assert got["simple_right"].entry == "simple_python_0"
    assert got["multi_turn_right"].entry == "multi_turn_base_0"
    assert {r.entry for r in records} == {run.entry.id for run in runs}
    assert got["simple_wrong"].problems[0].startswith("simple_python_0: value_error")
    assert got["irrelevance_called"].failure is not None
    assert got["multi_turn_right"].turns >= 4 * 2  # each turn: its calls, then "Done."
    assert got["multi_turn_no_calls"].problems[0].startswith("multi_turn_base_0: multi_turn:")


def _record(category: str, ok: bool, strategy: str = "baseline") -> RunRecord:
    return RunRecord(
        model="m",
        provider="p",
        profile="default",
        strategy=strategy,
        scenario=category,
        trial=1,
        tool_scenario=True,
        ok=ok,
        latency_ms=1000,
        status="completed",
        session_id="s",
        recoveries=["finalize_after_repeat"] if ok else [],
    )


def test_scores_use_bfcl_averaging_per_strategy():
    records = [
        _record("simple_python", True),
        _record("simple_python", False),
        _record("multiple", True),
        _record("live_simple", True),
        _record("live_multiple", False),
        _record("live_multiple", False),
        _record("live_multiple", False),
        _record("simple_python", True, strategy="production"),
    ]
    table = scores(BFCL, records)
    baseline = table["m / default / baseline"]
    assert baseline["categories"]["simple_python"]["accuracy"] == 0.5
    assert baseline["categories"]["simple_python"]["recoveries"] == {"finalize_after_repeat": 1}
    # non-live AST: the unweighted mean of the categories; live AST: weighted by entries
    assert baseline["averages"]["non_live_ast"]["accuracy"] == pytest.approx(0.75)
    assert baseline["averages"]["live_ast"]["accuracy"] == pytest.approx(0.25)
    assert table["m / default / production"]["categories"]["simple_python"]["accuracy"] == 1.0
    assert "multi_turn" not in baseline["averages"]


def test_chosen_entries_are_run_by_id_from_their_own_categories():
    ids = ("multiple_59", "live_simple_58-27-0", "multiple_7", "multiple_59")
    runs = select(BFCL, BfclSelection(categories="irrelevance", entries=ids), Recorders())
    assert [r.entry.id for r in runs] == ["multiple_7", "multiple_59", "live_simple_58-27-0"]
    assert [r.scenario.name for r in runs] == ["multiple", "multiple", "live_simple"]


@pytest.mark.parametrize(
    ("entry_id", "says"),
    [("multiple_99999", "BFCL has no entry multiple_99999"), ("lawyers_1", "not a BFCL entry")],
)
def test_an_unknown_entry_id_is_an_error_naming_it(entry_id: str, says: str):
    with pytest.raises(CliError, match=says) as raised:
        select(BFCL, BfclSelection(entries=(entry_id,)), Recorders())
    assert raised.value.code == "UNKNOWN_SCENARIO"
