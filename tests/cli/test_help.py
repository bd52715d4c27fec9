"""Every command's ``--help`` is readable in an 80-column terminal: option names whole,
descriptions whole; the top-level help groups the commands in panels."""

from __future__ import annotations

import pytest
import typer
from typer.core import TyperGroup
from typer.testing import CliRunner

from durable_loop.cli.app import PANELS
from durable_loop.console import app

COMMANDS = typer.main.get_command(app)
assert isinstance(COMMANDS, TyperGroup)


def help_text(command: str) -> str:
    result = CliRunner().invoke(
        app, [*command.split(), "--help"], env={"COLUMNS": "80"}, terminal_width=80
    )
    assert result.exit_code == 0, result.output
    return result.output


def leaf_commands(group: TyperGroup, prefix: str = "") -> dict:
    """Every runnable command by its full name (``tool-calls list``), groups expanded and
    lazily registered commands loaded."""
    found: dict = {}
    ctx = group.make_context("durable-loop", [], resilient_parsing=True)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        full = f"{prefix}{name}"
        if isinstance(command, TyperGroup):
            found.update(leaf_commands(command, f"{full} "))
        elif command is not None:
            found[full] = command
    return found


LEAVES = leaf_commands(COMMANDS)


@pytest.mark.parametrize("name", sorted(LEAVES))
def test_option_names_are_whole_at_80_columns(name: str):
    text = help_text(name)
    names = [
        opt
        for param in LEAVES[name].params
        for opt in (*param.opts, *param.secondary_opts)
        if opt.startswith("--")
    ]
    assert names
    assert [opt for opt in names if opt not in text] == []
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= 80


def test_worker_help_names_every_tool_source():
    text = help_text("worker")
    for source in ("--tools", "DURABLE_LOOP_ENSEMBLES", "DURABLE_LOOP_MCP_CONFIG"):
        assert source in text


def test_the_top_level_help_groups_commands_in_panels_and_cuts_nothing():
    from durable_loop.cli.app import ENTRIES

    text = help_text("")
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "…" not in text and "..." not in text.replace("[ARGS]...", "")
    titles = [line.split("─ ")[1].split(" ─")[0] for line in lines if line.startswith("╭─ ")]
    assert titles == list(PANELS)
    words = " ".join(" ".join(line.strip("│ ").split()) for line in lines)
    for entry in ENTRIES.values():
        if entry.hidden:
            assert f"│ {entry.name} " not in text
        else:  # every word of every summary is there, in order
            assert " ".join(entry.summary.split()) in words, entry.name
    panel_of = {}
    for line in lines:
        if line.startswith("╭─ "):
            current = line.split("─ ")[1].split(" ─")[0]
        elif line.startswith("│ ") and line[2] != " ":
            panel_of[line[2:].split()[0]] = current
    assert panel_of["pending"] == panel_of["approve"] == "People"
    assert panel_of["send"] == panel_of["status"] == panel_of["sessions"] == "Sessions"
    assert panel_of["worker"] == "Running" and panel_of["eval"] == "Evaluation"
    assert panel_of["chaos"] == "Operations"


def test_sub_command_listings_are_whole_at_80_columns():
    text = help_text("tool-calls")
    assert "..." not in text.replace("[ARGS]...", "") and "…" not in text
    assert "recent decisions and refused decisions" in text
    assert " confirm " not in text  # the hidden alias of approve


def test_version_names_the_package_and_the_sdk():
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.startswith("durable-loop ") and "temporalio 1." in result.output
