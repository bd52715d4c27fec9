"""A heartbeat ticker for activities that wait on something slow (a provider, a tool).

With a heartbeat timeout on the activity, a worker that dies mid-call (kill -9, OOM, lost
host) is noticed within that timeout and the call is retried on another worker, instead of
after the whole start-to-close timeout. A heartbeat is also how a cancel reaches a running
activity (the server answers it with the request), so every activity beats, with or without
a heartbeat timeout, often enough that a cancelled message stops within about a second: the
worker sends at most one heartbeat per ``CANCEL_NOTICE``. The
first beat comes after one interval, so a fast call costs no heartbeat RPC at all.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import timedelta

from temporalio import activity

MIN_BEAT_S = 0.2
BEATS_PER_TIMEOUT = 3
CANCEL_NOTICE_S = 0.5
CANCEL_NOTICE = timedelta(seconds=CANCEL_NOTICE_S)
"""The longest a worker holds back a heartbeat (and so the cancel its answer carries): the
worker's ``max_heartbeat_throttle_interval`` and ``default_heartbeat_throttle_interval``
(the SDK's defaults hold heartbeats back 80% of the heartbeat timeout, or 30 s)."""


def beat_interval_s() -> float | None:
    """Seconds between beats, or None for a local activity (cancelled without heartbeats)."""
    info = activity.info()
    if info.is_local:
        return None
    every_s = CANCEL_NOTICE_S / 2
    if info.heartbeat_timeout:
        every_s = min(every_s, info.heartbeat_timeout.total_seconds() / BEATS_PER_TIMEOUT)
    return max(MIN_BEAT_S, every_s)


async def _beat(every_s: float, detail: str) -> None:
    while True:
        await asyncio.sleep(every_s)
        activity.heartbeat(detail)


@contextlib.asynccontextmanager
async def heartbeating(detail: str) -> AsyncIterator[None]:
    """Heartbeat in the background while the body runs (the event loop must stay free: run
    blocking work in a thread)."""
    every_s = beat_interval_s()
    if every_s is None:
        yield
        return
    ticker = asyncio.create_task(_beat(every_s, detail))
    try:
        yield
    finally:
        ticker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await ticker
