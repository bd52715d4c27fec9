"""The routing benchmark: the labelled set, scoring, and offline runs over real HTTP."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from durable_loop.console import app
from durable_loop.core.config import RouterConfig
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.evals.routing.bench import LabelledQuery, RoutingBench, load_queries
from durable_loop.evals.routing.bench_tools import travel_desk
from durable_loop.evals.routing.report import QueryOutcome, save_report, summarize
from durable_loop.evals.routing.scripted_models import guessing, keyword, messy
from durable_loop.testing import reply
from durable_loop.tools.ensembles import EnsembleLoadError
from durable_loop.worker.builder import new_http_client
from tests.conftest import unique

QUERIES = Path(__file__).resolve().parents[3] / "evals" / "routing" / "queries.toml"
HELD_OUT = QUERIES.with_name("heldout.toml")
SPECS = travel_desk().specs()
NAMES = [s.name for s in SPECS]


def test_labelled_set_covers_four_tools_none_and_hard_cases():
    queries = load_queries(QUERIES, NAMES)
    assert len(queries) >= 40
    per_tool = Counter(q.tool for q in queries if q.expect == "call_tool")
    assert set(per_tool) == set(NAMES) and min(per_tool.values()) >= 5
    assert sum(q.expect == "none" for q in queries) >= 8
    assert sum(q.expect == "clarify" for q in queries) >= 3
    tags = Counter(t for q in queries for t in q.tags)
    assert tags["typo"] >= 5 and tags["nickname"] >= 5 and tags["multi"] >= 3


def test_broken_query_file_is_refused_with_line_and_field(tmp_path):
    path = tmp_path / "q.toml"
    path.write_text(
        '[[query]]\nid = "a"\ntext = "hi"\nexpect = "none"\n\n'
        '[[query]]\nid = "b"\ntext = "x"\nexpect = "call_tool"\ntool = "teleport"\n\n'
        '[[query]]\nid = "c"\ntext = "y"\nexpect = "perhaps"\n'
    )
    with pytest.raises(EnsembleLoadError) as err:
        load_queries(path, NAMES)
    found = [(p.line, p.field) for p in err.value.problems]
    assert (10, "query[1].tool") in found
    assert (15, "query[2].expect") in found


def test_scoring_rules():
    weather = LabelledQuery(
        id="q",
        text="t",
        expect="call_tool",
        tool="weather_forecast",
        acceptable=["currency_convert"],
        args={"city": "New York"},
    )
    right = QueryOutcome(id="q", tags=[], expect="call_tool", expected_tool="weather_forecast")
    right.choice, right.tool, right.args = "call_tool", "weather_forecast", {"city": "new york "}
    RoutingBench._score(weather, right)
    assert right.correct and right.acceptable and right.args_correct
    other = right.model_copy(update={"tool": "currency_convert", "args": None})
    RoutingBench._score(weather, other)
    assert not other.correct and other.acceptable and other.args_correct is None
    metrics = summarize([right, other])
    assert metrics.strict_accuracy == 0.5 and metrics.acceptable_accuracy == 1.0
    assert metrics.args_accuracy == 1.0


async def bench_with(scripted_llm, behaviour, queries, route_only=False):
    model = unique("bench")
    scripted_llm.script(model, [], then=behaviour)
    http = new_http_client()
    try:
        endpoint = LlmEndpoint(model=model, base_url=scripted_llm.base_url)
        bench = RoutingBench(http, endpoint, SPECS, route_only=route_only)
        return await bench.run(queries, behaviour="offline")
    finally:
        await http.aclose()


async def test_offline_run_scores_a_keyword_baseline(scripted_llm, tmp_path):
    queries = load_queries(QUERIES, NAMES)
    report = await bench_with(scripted_llm, keyword, queries)
    m = report.metrics
    assert m.queries == len(queries)
    assert m.json_validity == 1.0 and m.repair_rate == 0.0 and m.failure_rate == 0.0
    assert 0.3 < m.strict_accuracy < 1.0, "a keyword router is a weak baseline"
    assert m.accuracy_by_tag["plain"] > m.accuracy_by_tag["typo"]
    by_id = {o.id: o for o in report.outcomes}
    assert by_id["flight-plain-1"].correct and by_id["flight-plain-1"].args_correct
    assert by_id["package-clarify-1"].choice == "clarify"
    assert m.router_ms.p50 > 0 and m.executor_ms.p50 > 0
    path = save_report(report, tmp_path)
    assert path.name == f"routing_{report.model}.json"
    assert json.loads(path.read_text())["metrics"]["queries"] == len(queries)


async def test_repair_recovers_messy_outputs(scripted_llm):
    queries = load_queries(QUERIES, NAMES)
    clean = await bench_with(scripted_llm, keyword, queries)
    noisy = await bench_with(scripted_llm, messy, queries)
    assert noisy.metrics.json_validity < 1.0 and noisy.metrics.strict_json_rate < 1.0
    assert noisy.metrics.args_schema_validity < 1.0
    assert noisy.metrics.repair_rate > 0.2
    assert [(o.choice, o.tool, o.args) for o in noisy.outcomes] == [
        (o.choice, o.tool, o.args) for o in clean.outcomes
    ]


def test_command_line_runs_offline_and_saves_the_report(tmp_path):
    result = CliRunner().invoke(
        app, ["route-bench", "--queries", str(QUERIES), "--limit", "6", "--out", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    assert "strict accuracy" in result.output
    saved = json.loads((tmp_path / "routing_scripted-keyword.json").read_text())
    assert saved["behaviour"] == "keyword" and saved["metrics"]["queries"] == 6


def test_eval_pipeline_router_runs_the_routing_benchmark_offline(tmp_path):
    result = CliRunner().invoke(
        app, ["eval", "--pipeline", "router", "--behaviours", "messy", "--out", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    saved = json.loads((tmp_path / "routing_scripted-messy.json").read_text())
    assert saved["behaviour"] == "messy" and saved["metrics"]["queries"] >= 40


def test_eval_pipeline_router_refuses_an_unknown_behaviour_and_a_model_filter(tmp_path):
    unknown = CliRunner().invoke(app, ["eval", "--pipeline", "router", "--behaviours", "calm"])
    assert unknown.exit_code != 0 and "UNKNOWN_BEHAVIOUR" in unknown.output
    assert "keyword" in unknown.output
    live = ["eval", "--pipeline", "router", "--base-url", "http://127.0.0.1:9"]
    filtered = CliRunner().invoke(app, [*live, "--models", "tag:x"])
    assert filtered.exit_code != 0 and "MODEL_FILTER_UNSUPPORTED" in filtered.output


def test_held_out_set_is_apart_from_the_labelled_one_and_covers_every_choice():
    labelled = load_queries(QUERIES, NAMES)
    held_out = load_queries(HELD_OUT, NAMES)
    assert not {q.text.lower() for q in held_out} & {q.text.lower() for q in labelled}
    assert not {q.id for q in held_out} & {q.id for q in labelled}
    counts = Counter(q.expect for q in held_out)
    assert counts["clarify"] >= 5 and counts["none"] >= 5 and counts["call_tool"] >= 8
    assert {q.tool for q in held_out if q.expect == "clarify"} == set(NAMES)


def test_clarify_precision_and_recall():
    def outcome(expect, choice):
        made = QueryOutcome(id="q", tags=[], expect=expect, expected_tool="package_track")
        made.choice, made.tool = choice, "package_track"
        made.correct = expect == choice
        return made

    m = summarize(
        [
            outcome("clarify", "clarify"),
            outcome("call_tool", "clarify"),
            outcome("clarify", "call_tool"),
            outcome("clarify", "clarify"),
        ]
    )
    assert (m.clarify_rate, m.clarify_precision, m.clarify_recall) == (0.75, 0.6667, 0.6667)
    nothing = summarize([outcome("call_tool", "call_tool")])
    assert nothing.clarify_precision is None and nothing.clarify_recall is None


async def test_invented_identifiers_become_clarify_questions(scripted_llm):
    """The guessing behaviour never clarifies and invents ids and amounts; the grounding
    rule turns those calls into clarify answers (also for general questions it wrongly
    routed to a tool), and never a call whose values the query gives."""
    queries = load_queries(QUERIES, NAMES)
    report = await bench_with(scripted_llm, guessing, queries)
    routed = await bench_with(scripted_llm, guessing, queries, route_only=True)
    asked = {o.id: o.ungrounded for o in report.outcomes if o.ungrounded}
    assert {k: v for k, v in asked.items() if "clarify" in k} == {
        "flight-clarify-1": ["flight_number"],
        "flight-clarify-2": ["flight_number"],
        "package-clarify-1": ["tracking_id"],
        "package-clarify-2": ["tracking_id"],
        "currency-clarify-1": ["amount"],
    }
    texts = {q.id: q.text for q in queries}
    assert not any(ch.isdigit() for qid in asked for ch in texts[qid])
    assert report.metrics.clarify_recall == 1.0
    assert routed.metrics.clarify_rate == 0.0 and routed.metrics.clarify_precision is None
    assert routed.route_only and routed.metrics.executor_ms.p50 == 0
    assert report.metrics.strict_accuracy > routed.metrics.strict_accuracy


def test_command_line_names_the_report_with_a_suffix(tmp_path):
    result = CliRunner().invoke(
        app,
        [
            "route-bench",
            "--queries",
            str(HELD_OUT),
            "--scripted",
            "guessing",
            "--route-only",
            "--suffix",
            "_heldout",
            "--limit",
            "4",
            "--out",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "clarify precision" in result.output
    saved = json.loads((tmp_path / "routing_scripted-guessing_heldout.json").read_text())
    assert saved["route_only"] and saved["queries_file"] == str(HELD_OUT)
    assert all(not o["args"] for o in saved["outcomes"])


async def bench_scripted(scripted_llm, replies, specs=SPECS, **options):
    """One query through the bench against scripted replies; the requests it made."""
    model = unique("bench")
    scripted_llm.script(model, replies)
    http = new_http_client()
    try:
        endpoint = LlmEndpoint(model=model, base_url=scripted_llm.base_url)
        bench = RoutingBench(http, endpoint, specs, **options)
        query = LabelledQuery(
            id="q", text="Is flight BA 117 on time?", expect="call_tool", tool="flight_status"
        )
        outcome = await bench.run_query(query)
    finally:
        await http.aclose()
    return outcome, scripted_llm.requests(model)


def as_text(value) -> reply.Reply:
    return reply.text(json.dumps(value))


async def test_the_bench_sends_the_sessions_request_overrides_under_the_router_settings(
    scripted_llm,
):
    route = as_text({"choice": "call_tool", "tool": "flight_status", "question": None})
    call = as_text({"tool": "flight_status", "args": {"flight_number": "BA117"}})
    outcome, requests = await bench_scripted(
        scripted_llm, [route, call], request_overrides={"top_p": 0.5, "temperature": 0.9}
    )
    assert outcome.correct and outcome.args == {"flight_number": "BA117"}
    assert [(r.body["top_p"], r.body["temperature"]) for r in requests] == [(0.5, 0.0)] * 2


async def test_an_output_past_max_output_bytes_is_repaired_as_too_long(scripted_llm):
    long = {"choice": "call_tool", "tool": "flight_status", "question": "x" * 300}
    route = as_text({"choice": "call_tool", "tool": "flight_status", "question": None})
    call = as_text({"tool": "flight_status", "args": {"flight_number": "BA117"}})
    router = RouterConfig(max_output_bytes=256)
    outcome, requests = await bench_scripted(
        scripted_llm, [as_text(long), route, call], router=router
    )
    assert outcome.correct and outcome.repaired and len(requests) == 3
    assert outcome.steps[0].error == "the output is too long"
    assert "the output is too long" in requests[1].body["messages"][-1]["content"]


async def test_without_tools_the_bench_answers_none_without_a_router_request(scripted_llm):
    outcome, requests = await bench_scripted(scripted_llm, [], specs=[])
    assert (outcome.choice, outcome.steps, requests) == ("none", [], [])


async def test_a_clarify_for_values_the_query_holds_is_overruled(scripted_llm):
    route = as_text({"choice": "clarify", "tool": "flight_status", "question": "Which flight?"})
    call = as_text({"tool": "flight_status", "args": {"flight_number": "BA117"}})
    outcome, requests = await bench_scripted(scripted_llm, [route, call])
    assert (outcome.choice, outcome.tool, outcome.clarify_overruled) == (
        "call_tool",
        "flight_status",
        True,
    )
    assert [s.kind for s in outcome.steps] == ["route", "check"] and len(requests) == 2
