"""Retry-After: delta-seconds or an HTTP date, bounded."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from durable_loop.activities.retry_after import MAX_RETRY_AFTER_S, parse_retry_after

NOW = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("2", 2.0),
        (" 1.5 ", 1.5),
        ("0", 0.0),
        ("-3", 0.0),
        ("nan", 0.0),
        ("100000", MAX_RETRY_AFTER_S),
        ("Wed, 01 Jan 2025 12:00:30 GMT", 30.0),
        ("Wed, 01 Jan 2025 11:59:00 GMT", 0.0),
    ],
)
def test_parses_seconds_and_dates(header, seconds):
    assert parse_retry_after(header, now=NOW) == seconds


@pytest.mark.parametrize("header", [None, "", "soon", "Someday, 99 Foo 2025"])
def test_missing_or_unreadable_means_no_hint(header):
    assert parse_retry_after(header, now=NOW) is None
