"""How settled proposals read: every status in words a person reads (never ``conflict by
alice`` or ``is already conflict``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import get_args

import pytest

from durable_loop.core.proposals import DecisionResult, Settled, settled_phrase

STATUSES = get_args(Settled)


@pytest.mark.parametrize("status", STATUSES)
def test_every_settled_status_reads_as_words(status: str):
    result = DecisionResult(
        proposal_id="p1",
        status=status,  # type: ignore[arg-type]
        decided_by="alice",
        facts_version=3 if status == "committed" else None,
        decided_at=datetime(2026, 1, 1, tzinfo=UTC),
    )
    for text in (result.describe(), settled_phrase(status), settled_phrase(status, already=True)):
        assert f"{status} by" not in text or status in {"committed", "rejected"}
        assert f"is {status}" not in text or status not in {"conflict", "failed"}
        assert f"already {status}" not in text or status not in {"conflict", "failed"}


def test_the_outcome_lines():
    def line(status: str, version: int | None = None) -> str:
        return DecisionResult(
            proposal_id="p1",
            status=status,  # type: ignore[arg-type]
            decided_by="alice",
            facts_version=version,
            decided_at=datetime(2026, 1, 1, tzinfo=UTC),
        ).describe()

    assert line("committed", 3) == "committed by alice (facts version 3)"
    assert line("rejected") == "rejected by alice"
    assert line("conflict") == (
        "not committed: approved by alice, but the facts changed after it was proposed (conflict)"
    )
    assert line("failed") == "not committed: approved by alice, but committing it failed"
    assert line("expired") == "not decided before it expired"
    assert settled_phrase("expired") == "is expired"  # the service maps this to 410 EXPIRED
    assert settled_phrase("expired", already=True) == "is already expired"
