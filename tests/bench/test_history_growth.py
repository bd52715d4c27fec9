"""Smoke test: the history benchmark runs end to end at tiny sizes on the dev server."""

from __future__ import annotations

import json

from bench import history_growth
from bench.report import TARGET_RATIO


def test_quick_run_prints_linear_durable_and_growing_naive(tmp_path, capfd):
    output = tmp_path / "history_growth.json"
    history_growth.main(["--quick", "--output", str(output)])

    printed = json.loads(capfd.readouterr().out.strip().splitlines()[-1])
    assert printed == json.loads(output.read_text())
    ratios = printed["per_turn_ratio_largest_vs_smallest"]
    assert ratios["sizes"] == [3, 12]
    assert ratios["durable_loop"] <= TARGET_RATIO
    assert ratios["naive"] > 2 * ratios["durable_loop"]
    assert printed["per_turn_ratio_1000_vs_10"] == {"durable_loop": None, "naive": None}

    results = {(r["loop"], r["size"]): r for r in printed["results"]}
    assert set(results) == {(loop, size) for loop in ("durable_loop", "naive") for size in (3, 12)}
    for run in results.values():
        assert run["turns_done"] == run["size"], run
        assert run["continuity_ok"], run
        assert run["llm_requests"] == 2 * run["size"]
    durable = results[("durable_loop", 12)]
    assert durable["continue_as_new"] >= 1
    assert durable["turn_bytes"]["last"] <= 1.2 * durable["turn_bytes"]["first"]
    naive = results[("naive", 12)]
    assert naive["continue_as_new"] == 0
    assert naive["turn_bytes"]["last"] > 4 * naive["turn_bytes"]["first"]
