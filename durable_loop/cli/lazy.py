"""Commands registered by name, loaded when they run: ``durable-loop --help`` imports no
command module, and ``durable-loop status`` imports only the status command's.

Each :class:`Entry` names its command's function (or Typer sub-app) as ``module:attribute``
and carries the one-line summary the top-level help shows, grouped in help panels.
"""

from __future__ import annotations

import importlib
import textwrap
from typing import Any, NamedTuple

from typer.core import TyperGroup


class Entry(NamedTuple):
    name: str
    target: str
    """``package.module:attribute``: a command function or a ``typer.Typer`` sub-app."""
    panel: str
    summary: str
    hidden: bool = False


def load_command(entry: Entry) -> Any:  # a click Command (typer vendors click)
    """Import the entry's module and turn its function or sub-app into a command."""
    import typer
    from typer.main import get_command_from_info, get_group_from_info
    from typer.models import CommandInfo, TyperInfo

    module_name, _, attribute = entry.target.partition(":")
    target = getattr(importlib.import_module(module_name), attribute)
    if isinstance(target, typer.Typer):
        group = get_group_from_info(
            TyperInfo(target),
            pretty_exceptions_short=True,
            suggest_commands=True,
            rich_markup_mode=None,
        )
        group.name = entry.name
        group.hidden = entry.hidden
        return group
    info = CommandInfo(name=entry.name, callback=target, hidden=entry.hidden)
    return get_command_from_info(info, pretty_exceptions_short=True, rich_markup_mode=None)


class WholeHelpGroup(TyperGroup):
    """A group that lists its commands with their first sentence whole (click cuts it at
    the terminal's width with ``...``); long ones wrap."""

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit=10_000)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


class LazyGroup(WholeHelpGroup):
    """A group whose commands are :class:`Entry` rows until one of them runs."""

    entries: dict[str, Entry]
    panels: tuple[str, ...]

    def list_commands(self, ctx: Any) -> list[str]:
        return [*self.commands, *(name for name in self.entries if name not in self.commands)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands and cmd_name in self.entries:
            self.commands[cmd_name] = load_command(self.entries[cmd_name])
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """One panel per group of commands, from the entries alone (nothing imported);
        summaries wrap, they are never cut."""
        shown = [e for e in self.entries.values() if not e.hidden]
        if not shown:
            return
        width = max(formatter.width, 50)
        name_width = max(len(e.name) for e in shown)
        panels = [*self.panels, *sorted({e.panel for e in shown} - set(self.panels))]
        formatter.write_paragraph()
        for panel in panels:
            rows = [e for e in shown if e.panel == panel]
            if rows:
                formatter.write("\n".join(panel_lines(panel, rows, width, name_width)) + "\n")


def panel_lines(title: str, rows: list[Entry], width: int, name_width: int) -> list[str]:
    """A box titled ``title`` with one row per command, ``width`` characters wide."""
    inner = width - 4  # "│ " + text + " │"
    text_width = max(inner - name_width - 2, 20)
    lines = [f"╭─ {title} " + "─" * max(width - len(title) - 5, 0) + "╮"]
    for entry in rows:
        wrapped = textwrap.wrap(entry.summary, text_width, break_long_words=False) or [""]
        for index, part in enumerate(wrapped):
            name = entry.name if index == 0 else ""
            lines.append(f"│ {name:<{name_width}}  {part:<{text_width}}".ljust(width - 1) + "│")
    lines.append("╰" + "─" * (width - 2) + "╯")
    return lines
