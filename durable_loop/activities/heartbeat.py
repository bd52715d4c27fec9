"""A heartbeat ticker for activities that wait on something slow (a provider, a tool).

With a heartbeat timeout on the activity, a worker that dies mid-call (kill -9, OOM, lost
host) is noticed within that timeout and the call is retried on another worker, instead of
after the whole start-to-close timeout. The first beat comes after one interval, so a fast
call costs no heartbeat RPC at all.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from temporalio import activity

MIN_BEAT_S = 0.2
BEATS_PER_TIMEOUT = 3


def beat_interval_s() -> float | None:
    """Seconds between beats, or None when the activity has no heartbeat timeout (e.g. a
    local activity)."""
    timeout = activity.info().heartbeat_timeout
    if not timeout:
        return None
    return max(MIN_BEAT_S, timeout.total_seconds() / BEATS_PER_TIMEOUT)


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
