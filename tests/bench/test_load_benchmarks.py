"""Smoke test: every load benchmark runs end to end in its --quick mode (well under a
minute together) and writes the report it prints. The numbers themselves are measured by
the full runs (bench/results/); here only what must hold at any size is checked."""

from __future__ import annotations

import json

from bench import (
    dev_server_latency,
    history_per_turn,
    overhead,
    parallel_tools,
    parked_sessions,
    session_start_cost,
    store_ops,
    throughput,
    throughput_floor,
)


def printed(capfd) -> dict:
    return json.loads(capfd.readouterr().out.strip().splitlines()[-1])


def test_overhead_quick(tmp_path, capfd):
    report = overhead.main(["--quick", "--output", str(tmp_path / "o.json")])
    assert printed(capfd) == json.loads((tmp_path / "o.json").read_text())
    loops = {loop.loop: loop for loop in report.loops}
    assert set(loops) == {"durable_loop", "bare_temporal", "in_process"}
    durable, bare = loops["durable_loop"].hops, loops["bare_temporal"].hops
    assert durable is not None and bare is not None
    # the same round trips per LLM call: one LLM activity, the tool activity, 2 tasks
    assert durable.per_llm_call["llm_turn"] == bare.per_llm_call["naive_llm"] == 1.0
    assert durable.per_llm_call["run_tool"] == bare.per_llm_call["naive_tool"]
    assert report.ratio_durable_vs_bare > 0


def test_parallel_tools_quick(tmp_path, capfd):
    report = parallel_tools.main(["--quick", "--output", str(tmp_path / "p.json")])
    assert printed(capfd)["target_met"] == report.target_met
    for variant in report.variants:
        assert variant.all_ok, variant
        serial = variant.tools * variant.tool_seconds
        assert variant.tool_turn_wall_s < serial, f"{variant.tool} ran serially: {variant}"


def test_history_per_turn_quick(tmp_path, capfd):
    report = history_per_turn.main(["--quick", "--output", str(tmp_path / "h.json")])
    assert printed(capfd)["sizes"] == [3, 15]
    largest = report.results[-1]
    assert largest.runs >= 2, "the quick session continues as new"
    assert largest.stored_messages == 4 * largest.size
    assert report.per_turn_ratio_largest_vs_smallest <= history_per_turn.TARGET_RATIO


def test_throughput_quick(tmp_path, capfd):
    report = throughput.main(["--quick", "--output", str(tmp_path / "t.json")])
    assert printed(capfd)["ratio_tuned_vs_defaults"] == {"3": report.ratio_tuned_vs_defaults[3]}
    assert {level.config for level in report.levels} == {"defaults", "tuned"}
    for level in report.levels:
        assert level.failed_messages == 0 and not level.errors, level
        assert level.turns == 2 * level.sessions * level.messages_per_session
        assert level.worker_cpu_s_per_turn > 0
        assert level.cpu_ceiling_turns_per_s and level.cpu_ceiling_turns_per_s > 0
    assert set(report.ratio_tuned_ceiling_vs_defaults) == {3}


def test_parked_sessions_quick(tmp_path, capfd):
    report = parked_sessions.main(["--quick", "--output", str(tmp_path / "s.json")])
    assert printed(capfd)["sessions"] == 12
    for run in report.runs:
        assert run.parked == run.sessions == 12 and run.failed == 0
        assert run.woken_committed == len(run.wake_s) == parked_sessions.WAKE
        assert len(run.rss_curve) == parked_sessions.BATCHES


def test_dev_server_latency_quick(tmp_path, capfd):
    report = dev_server_latency.main(["--quick", "--output", str(tmp_path / "d.json")])
    assert printed(capfd) == json.loads((tmp_path / "d.json").read_text())
    stock, ours = report.servers
    assert (stock.server, stock.dynamic_config) == ("stock", {})
    assert ours.dynamic_config["history.transferProcessorMaxPollRPS"] == 1000
    for server in report.servers:
        assert server.hops.per_llm_call["llm_turn"] == 1.0
        assert "workflow task queue" in server.hops.median_ms


def test_store_ops_quick(tmp_path, capfd):
    report = store_ops.main(["--quick", "--output", str(tmp_path / "s.json")])
    assert printed(capfd) == json.loads((tmp_path / "s.json").read_text())
    assert {(r.op, r.path) for r in report.results} == {
        (op, path)
        for op in ("get", "read 10 rows", "append 1 row")
        for path in ("aiosqlite", "database")
    }
    assert all(r.cpu_ms_per_call > 0 and r.calls == 50 for r in report.results)
    assert [r.op for r in report.workspace] == ["snapshot", "apply 1 draft op", "propose+confirm"]
    assert all(r.cpu_ms_per_call > 0 and r.calls == 50 for r in report.workspace)
    assert report.window is not None and report.window.messages == 2_000
    assert report.window.ms_with_role_index > 0 and report.window.ms_without_role_index > 0


def test_session_start_cost_quick(tmp_path, capfd):
    report = session_start_cost.main(["--quick", "--output", str(tmp_path / "c.json")])
    assert printed(capfd) == json.loads((tmp_path / "c.json").read_text())
    configs = {session_start_cost.BEFORE, session_start_cost.AFTER}
    assert {(r.config, r.max_cached_workflows) for r in report.runs} == {
        (c, cache) for c in configs for cache in (4, 8)
    }
    for run in report.runs:
        assert run.failed == 0 and not run.errors, run
        assert run.first_task_cpu_ms_p50 > 0 and run.instance_kb > 0
    summary = report.summary
    assert set(summary.first_task_cpu_ms) == set(summary.kb_per_cached_session) == configs
    # what holds at any size: a workflow run imports less, so it holds less
    assert summary.instance_kb["durable_loop"] < summary.instance_kb["core_passthrough"]


def test_throughput_floor_quick(tmp_path, capfd):
    report = throughput_floor.main(["--quick", "--output", str(tmp_path / "f.json")])
    assert printed(capfd)["ratio_durable_vs_bare"] == report.ratio_durable_vs_bare
    assert {level.config for level in report.levels} == {"durable_loop", "bare_temporal"}
    for level in report.levels:
        assert level.failed_messages == 0 and not level.errors, level
        assert level.turns == 2 * level.sessions * level.messages_per_session
        assert level.worker_cpu_s_per_turn > 0
    assert set(report.server_cpu_ms_per_turn) == {"durable_loop", "bare_temporal"}
