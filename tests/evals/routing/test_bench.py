"""The routing benchmark: the labelled set, scoring, and offline runs over real HTTP."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from durable_loop.console import app
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.evals.routing.bench import (
    LabelledQuery,
    QueryOutcome,
    RoutingBench,
    load_queries,
    save_report,
    summarize,
)
from durable_loop.evals.routing.bench_tools import travel_desk
from durable_loop.evals.routing.scripted_models import keyword, messy
from durable_loop.tools.ensembles import EnsembleLoadError
from durable_loop.worker.builder import new_http_client
from tests.conftest import unique

QUERIES = Path(__file__).resolve().parents[3] / "evals" / "routing" / "queries.toml"
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


async def bench_with(scripted_llm, behaviour, queries):
    model = unique("bench")
    scripted_llm.script(model, [], then=behaviour)
    http = new_http_client()
    try:
        endpoint = LlmEndpoint(model=model, base_url=scripted_llm.base_url)
        return await RoutingBench(http, endpoint, SPECS).run(queries, behaviour="offline")
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
