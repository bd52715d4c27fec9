"""Smoke test of ``bench.cli_latency``: every side of a case runs (durable-loop, the stock
``temporal`` CLI, the bare floor and the Typer floor, each as its own process that must exit
0) and the report is what it prints. The latencies are measured by the full runs
(bench/results/cli_latency.json)."""

from __future__ import annotations

import json

from bench import cli_latency


def test_cli_latency_one_round(tmp_path, capfd):
    output = tmp_path / "c.json"
    report = cli_latency.main(
        ["--rounds", "1", "--idle", "1", "--only=--help,status", "--output", str(output)]
    )
    printed = json.loads(capfd.readouterr().out.strip().splitlines()[-1])
    assert printed == json.loads(output.read_text())
    cases = {case.name: case for case in report.cases}
    assert set(cases) == {"--help", "status"}
    assert cases["--help"].floor_s is None and cases["--help"].typer_floor_s is None
    status = cases["status"]
    assert status.floor_s and status.typer_floor_s and status.durable_loop_cpu_s > 0
    assert abs(status.vs_floor - status.durable_loop_s / status.floor_s) < 0.02  # rounded
    assert cases["--help"].target.endswith("the cheapest floor")
    assert report.help_floor_s == status.floor_s  # the only floor measured


def test_the_table_names_every_case_and_marks_misses():
    def result(name: str, met: bool) -> cli_latency.CaseResult:
        return cli_latency.CaseResult(
            name=name,
            durable_loop_s=0.5,
            temporal_s=0.05,
            floor_s=0.3,
            vs_floor=1.67,
            vs_temporal=10.0,
            target="<= 1.3x its floor",
            met=met,
            typer_floor_s=0.45,
            vs_typer_floor=1.11,
            durable_loop_cpu_s=0.45,
            floor_cpu_s=0.28,
            vs_floor_cpu=1.6,
            durable_loop_runs=[0.5],
        )

    report = cli_latency.CliLatencyReport(
        cases=[result("status", False), result("pending", True)],
        help_floor_s=0.3,
        help_floor_cpu_s=0.28,
        rounds=1,
        all_met=False,
        setup="",
        machine={},
        wall_s=1.0,
    )
    lines = cli_latency.table(report)
    assert lines[1].startswith("status") and lines[1].endswith("(MISSED)")
    assert lines[2].startswith("pending") and lines[2].endswith("(met)")
