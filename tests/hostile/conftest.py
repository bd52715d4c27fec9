"""Hostile-input suite: print (and keep in pytest's cache) how many cases ran."""

from __future__ import annotations

import pytest

from tests.hostile.budget import CASES, PROFILE


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not CASES:
        return
    total = sum(CASES.values())
    terminalreporter.section(f"hostile input: {total} cases (profile {PROFILE})")
    for area, count in sorted(CASES.items()):
        terminalreporter.write_line(f"  {area:<40} {count:>7}")
    cache = getattr(terminalreporter.config, "cache", None)
    if cache is not None:
        cache.set("hostile/cases", {"profile": PROFILE, "total": total, **dict(CASES)})
