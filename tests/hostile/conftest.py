"""Hostile-input suite: the ``hostile`` marker, and how many cases ran (printed at the
end and kept in pytest's cache under ``hostile/cases``)."""

from __future__ import annotations

import pytest

from tests.hostile.budget import CASES, PROFILE


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark this directory ``hostile`` (``-m "not hostile"`` skips the fuzzing)."""
    for item in items:
        if "tests/hostile/" in item.nodeid:
            item.add_marker(pytest.mark.hostile)


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
