"""``durable-loop eval`` offline end to end: the report files against their schema."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from durable_loop.cli.local_llm import local_llm_command
from durable_loop.console import app
from durable_loop.evals.report import SUMMARIES
from durable_loop.evals.run import EvalOptions, local_server_command
from durable_loop.evals.schema import RunRecord, Summary
from tests.uninstalled import uninstall

runner = CliRunner()


def test_the_everyday_set_counts_recoveries_per_scenario(tmp_path: Path):
    result = runner.invoke(
        app,
        [
            "eval",
            "--scenarios",
            "everyday_arithmetic,everyday_chit_chat",
            "--behaviours",
            "writes_call_after_repeat",
            "--out",
            str(tmp_path),
        ],
        env={"DURABLE_LOOP_EVAL_TRIALS": "1"},
    )
    assert result.exit_code == 0, result.output
    [directory] = list(tmp_path.iterdir())
    summary = Summary.model_validate_json((directory / "summary.json").read_text())
    assert summary.failures == {"REPLY_NOT_AN_ANSWER": 1}  # the baseline arithmetic run
    assert summary.recoveries == {"finalize_text_call_reply": 1}
    table = (directory / "report.md").read_text()
    line = "- writes_call_after_repeat / scripted / production / everyday_arithmetic: 1/1: "
    assert line + "finalize_text_call_reply x1" in table
    assert "everyday_chit_chat: " not in table.split("Recoveries")[1]


def test_offline_run_writes_a_valid_report(tmp_path: Path):
    result = runner.invoke(
        app,
        [
            "eval",
            "--scenarios",
            "happy_path,chat_only",
            "--behaviours",
            "well_behaved,tags_as_text",
            "--out",
            str(tmp_path),
            "-v",
        ],
        env={"DURABLE_LOOP_EVAL_TRIALS": "2"},
    )
    assert result.exit_code == 0, result.output
    [directory] = list(tmp_path.iterdir())
    records = [
        RunRecord.model_validate_json(line)
        for line in (directory / "runs.jsonl").read_text().splitlines()
    ]
    assert len(records) == 2 * 2 * 2 * 2  # behaviours x strategies x scenarios x trials
    assert all(r.prompt_tokens > 0 and r.cached_prompt_tokens == 0 for r in records)
    summary = Summary.model_validate_json((directory / "summary.json").read_text())
    assert summary.trials == 2 and summary.mode == "offline"
    # tags_as_text fails only its baseline tool scenario (happy_path, both trials)
    assert summary.overall.ok == 14 and summary.failures == {"REPLY_NOT_AN_ANSWER": 2}
    assert summary.tool_scenarios.runs == 8 and summary.tool_scenarios.ok == 6
    by_scenario = SUMMARIES.validate_json((directory / "summary_by_scenario.json").read_text())
    assert {(s.model, s.scenario) for s in by_scenario} == {
        (m, s) for m in ("well_behaved", "tags_as_text") for s in ("happy_path", "chat_only")
    }
    matrix = SUMMARIES.validate_json(
        (directory / "summary_by_scenario_and_strategy.json").read_text()
    )
    tags_baseline = next(
        s
        for s in matrix
        if (s.model, s.strategy, s.scenario) == ("tags_as_text", "baseline", "happy_path")
    )
    assert tags_baseline.overall.success_rate == 0.0
    assert (directory / "matrix.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    table = (directory / "report.md").read_text()
    assert "| tags_as_text | scripted | baseline | 0/2 | 2/2 | 0% |" in table
    assert "happy_path #1" in result.output or "happy_path #2" in result.output


def test_without_the_evals_extra_the_report_says_why_it_has_no_chart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    uninstall(monkeypatch, "matplotlib")
    args = ["eval", "--scenarios", "chat_only", "--behaviours", "well_behaved"]
    result = runner.invoke(app, [*args, "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    [directory] = list(tmp_path.iterdir())
    assert not (directory / "matrix.png").exists()
    assert (directory / "summary.json").is_file()
    assert (
        (directory / "report.md")
        .read_text()
        .endswith(
            "No chart: EXTRA_NOT_INSTALLED: an eval chart needs matplotlib, which is not "
            "installed: pip install 'durable-loop[evals]'\n"
        )
    )


@pytest.mark.parametrize(
    ("args", "code", "lists"),
    [
        (["--scenarios", "nope"], "UNKNOWN_SCENARIO", "happy_path"),
        (["--behaviours", "nope"], "UNKNOWN_BEHAVIOUR", "well_behaved"),
        (["--strategies", "nope"], "UNKNOWN_STRATEGY", "production"),
        (["--live", "--models", "tag:nothing"], "NO_MODELS", "tag"),
        (
            ["--live", "--models", "openai/gpt-5.2", "--profiles", "nope"],
            "UNKNOWN_PROFILE",
            "greedy",
        ),
        (["--request-overrides", "[1]"], "BAD_JSON", "object"),
    ],
)
def test_bad_input_is_one_line_listing_what_exists(args, code, lists, tmp_path):
    result = runner.invoke(
        app, ["eval", *args, "--out", str(tmp_path)], env={"OPENROUTER_API_KEY": "k"}
    )
    assert result.exit_code == 2, result.output
    assert code in result.output and lists in result.output


@pytest.mark.parametrize(("ctx_size", "expected"), [(None, 4096), (16384, 16384)])
def test_the_local_server_the_eval_starts_gets_its_context_size(ctx_size, expected):
    """The command the eval runs for its own server is one ``local-llm`` accepts, with the
    context ``--ctx-size`` asked for (multi_turn_base's tools need more than the default)."""
    command = local_server_command(EvalOptions(local=True, local_ctx_size=ctx_size), 8123)
    assert command[1:4] == ["-m", "durable_loop", "local-llm"]
    local_llm = typer.Typer()
    local_llm.command()(local_llm_command)
    params = typer.main.get_command(local_llm).make_context("local-llm", command[4:]).params
    assert params == params | {"ctx_size": expected, "port": 8123, "fetch": False}
