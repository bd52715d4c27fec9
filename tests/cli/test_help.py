"""Every command's ``--help`` is readable in an 80-column terminal: option names whole."""

from __future__ import annotations

import pytest
import typer
from typer.core import TyperGroup
from typer.testing import CliRunner

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
    """Every runnable command by its full name (``tool-calls list``), groups expanded."""
    found: dict = {}
    for name, command in group.commands.items():
        full = f"{prefix}{name}"
        if isinstance(command, TyperGroup):
            found.update(leaf_commands(command, f"{full} "))
        else:
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
