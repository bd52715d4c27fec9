"""bench.replay_under_queries at its smallest: one local_done session on the current code,
polled by its status Query, replays, and the report says so in its documented shape."""

from __future__ import annotations

import json

import pytest

from bench import replay_under_queries
from durable_loop.workflows import run_start_patches
from durable_loop.workflows import session as session_module


def test_one_gate_on_session_replays(tmp_path, capfd):
    output = tmp_path / "r.json"
    report = replay_under_queries.main(
        ["--runs", "1", "--scenarios", "local_done", "--columns", "gate_on", "--out", str(output)]
    )
    printed = json.loads(capfd.readouterr().out.strip().splitlines()[-1])
    assert printed == json.loads(output.read_text())
    assert printed["temporalio"] and printed["date"] and "--runs 1" in printed["command"]
    assert (report.runs, report.pollers, report.scenarios) == (1, 4, ["local_done"])
    assert report.columns == ["gate_on"]
    assert report.gate_switch_ok
    (cell,) = report.cells
    assert (cell.scenario, cell.column, cell.sessions) == ("local_done", "gate_on", 1)
    assert cell.replay_failures == 0 and cell.failure_samples == [], cell
    assert cell.queries_answered > 0 and cell.queries_failed == 0 and cell.gate_recorded == 1
    (session,) = report.sessions
    assert session.replay_ok and session.error is None, session
    assert session.replies == ["completed ['finalize_when_done']"]
    assert session.queries == cell.queries_answered
    # the gate switch is the bench's alone: the modules have their function back
    original = run_start_patches.ask_patches_at_run_start
    assert original.__module__ == run_start_patches.__name__
    assert session_module.ask_patches_at_run_start is original


@pytest.mark.parametrize(
    "argv",
    [["--runs", "0"], ["--scenarios", "nope"], ["--columns", "gate_sideways"], ["--pollers", "0"]],
)
def test_bad_arguments(argv):
    with pytest.raises(SystemExit):
        replay_under_queries.parse_args(argv)


def test_columns_keep_their_order():
    args = replay_under_queries.parse_args(["--columns", "not_polled,gate_on"])
    assert args.columns == ["gate_on", "not_polled"]
    assert args.output == replay_under_queries.DEFAULT_OUTPUT
