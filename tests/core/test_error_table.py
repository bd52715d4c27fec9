"""The error table in docs/architecture.md lists exactly the codes of ErrorCode."""

from __future__ import annotations

import re
from pathlib import Path

from durable_loop.core.errors import ErrorCode

ARCHITECTURE = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"
ROW = re.compile(r"^\| `([A-Z][A-Z0-9_]*)` \| (.+) \|$")


def table_rows() -> list[tuple[str, str]]:
    """(code, meaning) of every row of the table under the ``## Errors`` heading."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text.split("\n## Errors\n", 1)[1].split("\n## ", 1)[0]
    return [m.groups() for line in section.splitlines() if (m := ROW.match(line.strip()))]


def test_the_table_lists_every_code_once_with_a_meaning():
    rows = table_rows()
    codes = [code for code, _ in rows]
    assert len(codes) == len(set(codes)), sorted({c for c in codes if codes.count(c) > 1})
    assert set(codes) == {code.value for code in ErrorCode}
    assert all(meaning.strip() for _, meaning in rows)
