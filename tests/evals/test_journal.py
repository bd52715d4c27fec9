"""Runs written as they finish, and ``durable-loop eval --resume`` running only the rest."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from durable_loop.cli.errors import CliError
from durable_loop.console import app
from durable_loop.evals.codes import EvalCode
from durable_loop.evals.journal import (
    RUNS_FILE,
    job_key,
    journal,
    record_key,
    recorded,
    resume,
)
from durable_loop.evals.run import EvalOptions, offline_plan
from durable_loop.evals.schema import RunRecord, Summary
from durable_loop.testing.scripted import ScriptedLLM

runner = CliRunner()
OFFLINE = ["eval", "--scenarios", "happy_path,chat_only", "--behaviours", "well_behaved"]


def record(scenario: str = "chat_only", trial: int = 1, **kw: object) -> RunRecord:
    fields: dict[str, object] = {
        "model": "well_behaved",
        "provider": "scripted",
        "profile": "scripted",
        "strategy": "baseline",
        "scenario": scenario,
        "trial": trial,
        "tool_scenario": False,
        "ok": True,
        "latency_ms": 5,
        "status": "completed",
        "session_id": f"eval-{scenario}-{trial}",
    }
    return RunRecord.model_validate({**fields, **kw})


def test_each_run_is_on_disk_when_it_ends_and_a_cut_off_last_line_is_left_out(tmp_path: Path):
    with journal(tmp_path) as write:
        write(record(trial=1))
        assert recorded(tmp_path) == [record(trial=1)]
        write(record(trial=2))
    with (tmp_path / RUNS_FILE).open("a") as out:
        out.write('{"model": "well_beh')
    assert [r.trial for r in recorded(tmp_path)] == [1, 2]


def test_a_resumed_journal_drops_the_cut_off_line_before_appending(tmp_path: Path):
    """Stopped twice: the second resume must still read the file the first one left."""
    (tmp_path / RUNS_FILE).write_text(record(trial=1).model_dump_json() + '\n{"model": "cu')
    with journal(tmp_path, recorded(tmp_path)) as write:
        write(record(trial=2))
    assert [r.trial for r in recorded(tmp_path)] == [1, 2]
    assert len((tmp_path / RUNS_FILE).read_text().splitlines()) == 2


def test_a_directory_with_no_runs_or_a_broken_line_inside_is_refused(tmp_path: Path):
    with pytest.raises(CliError) as missing:
        recorded(tmp_path)
    assert missing.value.code == EvalCode.BAD_RESUME and RUNS_FILE in str(missing.value)
    lines = ["not json", record().model_dump_json()]
    (tmp_path / RUNS_FILE).write_text("\n".join(lines) + "\n")
    with pytest.raises(CliError) as broken:
        recorded(tmp_path)
    assert broken.value.code == EvalCode.BAD_RESUME and f"{RUNS_FILE}:1" in str(broken.value)


def test_resume_keeps_the_recorded_runs_and_plans_only_the_others(tmp_path: Path):
    with ScriptedLLM() as llm:
        jobs = offline_plan(
            EvalOptions(scenarios="happy_path,chat_only", behaviours="well_behaved"), llm
        )
    assert len(jobs) == 4
    done = [record("chat_only", strategy="baseline"), record("chat_only", strategy="production")]
    resumed = resume(jobs, done, tmp_path)
    assert resumed.records == done
    assert {(job_key(j).scenario, job_key(j).strategy) for j in resumed.jobs} == {
        ("happy_path", "baseline"),
        ("happy_path", "production"),
    }
    with pytest.raises(CliError) as other:
        resume(jobs, [*done, record("chat_only", trial=2)], tmp_path)
    assert other.value.code == EvalCode.RESUME_MISMATCH
    assert "1 of its 3 runs" in str(other.value) and "chat_only #2" in str(other.value)


def test_a_stopped_run_resumed_runs_the_rest_and_reports_them_all(tmp_path: Path):
    first = runner.invoke(app, [*OFFLINE, "--out", str(tmp_path)])
    assert first.exit_code == 0, first.output
    [directory] = list(tmp_path.iterdir())
    lines = (directory / RUNS_FILE).read_text().splitlines()
    assert len(lines) == 4
    kept = lines[:2]
    (directory / RUNS_FILE).write_text("\n".join(kept) + '\n{"model": "cut')

    resumed = runner.invoke(app, [*OFFLINE, "--out", str(tmp_path), "--resume", str(directory)])
    assert resumed.exit_code == 0, resumed.output
    assert "2 runs recorded, 2 to run" in resumed.output
    assert list(tmp_path.iterdir()) == [directory]
    records = recorded(directory)
    assert len(records) == 4 and len({record_key(r) for r in records}) == 4
    assert [r.model_dump_json() for r in records[:2]] == kept
    summary = Summary.model_validate_json((directory / "summary.json").read_text())
    assert summary.resumed_runs == 2 and summary.overall.runs == 4
    assert (
        "2 of the runs were recorded before this invocation"
        in (directory / "report.md").read_text()
    )


def test_resuming_with_other_options_or_outside_a_run_is_refused(tmp_path: Path):
    first = runner.invoke(app, [*OFFLINE, "--out", str(tmp_path)])
    [directory] = list(tmp_path.iterdir())
    assert first.exit_code == 0, first.output
    narrower = ["eval", "--scenarios", "happy_path", "--behaviours", "well_behaved"]
    other = runner.invoke(app, [*narrower, "--resume", str(directory)])
    assert other.exit_code == 2 and "RESUME_MISMATCH" in other.output
    replay = runner.invoke(app, ["eval", "--from-sessions", "s1", "--resume", str(directory)])
    assert replay.exit_code == 2 and "BAD_RESUME" in replay.output
    assert len(recorded(directory)) == 4
