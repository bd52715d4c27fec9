"""Fuzz budgets and the count of cases actually run.

Each property test declares its share of the total budget with :func:`fuzz`; the active
hypothesis profile (``HYPOTHESIS_PROFILE``: ``ci`` by default, ``long`` for ten times as
many cases, ``smoke`` for a tenth) scales every share. Test bodies call :func:`hit` once
per case, and ``conftest.py`` prints the totals at the end of the run.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from typing import TypeVar

from hypothesis import HealthCheck, settings

F = TypeVar("F", bound=Callable[..., object])

SCALES = {"ci": 1.0, "long": 10.0, "smoke": 0.1}
COMMON = {
    "deadline": None,
    "print_blob": True,
    "suppress_health_check": [
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
        HealthCheck.large_base_example,
    ],
}
for _name in SCALES:
    settings.register_profile(_name, **COMMON)  # type: ignore[arg-type]
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
if PROFILE not in SCALES:
    raise RuntimeError(f"HYPOTHESIS_PROFILE must be one of {sorted(SCALES)}, not {PROFILE!r}")
settings.load_profile(PROFILE)

CASES: Counter[str] = Counter()


def scaled(examples: int) -> int:
    return max(1, int(examples * SCALES[PROFILE]))


def fuzz(examples: int) -> Callable[[F], F]:
    """``@fuzz(n)`` above ``@given``: this test's share of the total case budget."""
    return settings(max_examples=scaled(examples))


def hit(area: str, count: int = 1) -> None:
    CASES[area] += count
