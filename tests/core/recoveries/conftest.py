from __future__ import annotations

from collections.abc import Iterator

import pytest

from durable_loop.core.recoveries import REGISTRY, Recovery, register
from tests.core.recoveries.full_stop import FULL_STOP


@pytest.fixture
def custom_recovery() -> Iterator[Recovery[object]]:  # type: ignore[type-var]
    register(FULL_STOP)
    yield FULL_STOP
    REGISTRY.pop(FULL_STOP.name)
