"""The fenced blocks of the README and the docs, with the directives written before them.

A directive is an HTML comment on the line right before a fence, so what the docs test does
with a block is visible where the block is::

    <!-- docs-test: skip: needs a hosted model (an OpenRouter key) -->
    <!-- docs-test: given registry, MyWorkflow; setup proposals -->

``skip: REASON`` (a reason is required), ``pytest`` (the block is a test file, run in a
project of its own), ``given NAMES`` (objects of the reader's own, defined before the block
runs), ``setup NAME`` (a situation the block starts from) and ``stand-in NAMES`` (the
long-running commands the test's own servers replace). Directives are separated by ``;``.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PAGES = sorted([REPO / "README.md", *(REPO / "docs").glob("*.md")])
RUNNABLE = {"sh", "python"}
KNOWN_LANGUAGES = RUNNABLE | {"text", "toml", "json", "yaml"}
DIRECTIVES = {"skip", "pytest", "given", "setup", "stand-in"}

FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
DIRECTIVE = re.compile(r"^<!--\s*docs-test:(.*)-->\s*$")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    language: str
    source: str
    directives: dict[str, list[str]] = field(default_factory=dict)

    @property
    def where(self) -> str:
        page = self.page.relative_to(REPO) if self.page.is_relative_to(REPO) else self.page
        return f"{page}:{self.line}"

    @property
    def skip_reason(self) -> str | None:
        reason = self.directives.get("skip")
        return reason[0] if reason else None


def parse_directives(text: str) -> dict[str, list[str]]:
    """``skip: why`` → {"skip": ["why"]} (the reason is the rest of the comment);
    ``given a, b; setup x`` → {"given": ["a", "b"], "setup": ["x"]}."""
    name, _, rest = text.strip().partition(" ")
    if name.rstrip(":") == "skip":
        reason = rest.strip().lstrip(":").strip()
        if not reason:
            raise ValueError("docs-test: skip needs a reason")
        return {"skip": [reason]}
    parsed: dict[str, list[str]] = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        name, _, rest = part.partition(" ")
        if name not in DIRECTIVES - {"skip"}:
            raise ValueError(f"unknown docs-test directive {name!r} in {text!r}")
        parsed[name] = [v.strip() for v in rest.split(",") if v.strip()]
    return parsed


def blocks_of(page: Path, text: str | None = None) -> list[Block]:
    text = page.read_text() if text is None else text
    blocks = []
    for match in FENCE.finditer(text):
        before = text[: match.start()]
        directive = DIRECTIVE.match(before.rstrip("\n").rpartition("\n")[2])
        blocks.append(
            Block(
                page=page,
                line=before.count("\n") + 1,
                language=match.group(1).strip(),
                source=match.group(2),
                directives=parse_directives(directive.group(1)) if directive else {},
            )
        )
    return blocks


def commands_of(source: str) -> list[str]:
    """The block's commands: a line continues after ``\\`` or inside quotes; blank and
    comment lines are dropped."""
    commands: list[str] = []
    pending = ""
    for line in source.splitlines():
        pending += line + "\n"
        if line.rstrip().endswith("\\"):
            continue
        try:
            shlex.split(pending, comments=True)
        except ValueError:  # an open quote
            continue
        command = pending.strip()
        pending = ""
        if command and not command.startswith("#"):
            commands.append(command)
    return commands
