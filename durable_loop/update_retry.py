"""Sending by Update without losing the message under overload.

An Update becomes durable only once a worker accepts it. When the server cannot get it
accepted in time (overloaded: bench/throughput.py saw ~8% of 1,000 concurrent
update-with-start calls fail this way on 2 cores) the SDK raises
``WorkflowUpdateRPCTimeoutOrCancelledError`` and the message may never have been admitted.
Repeating the call with the same update id is safe: an admitted Update is joined, not
repeated, and the session workflow also deduplicates by message id.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from typing import TypeVar

from temporalio.client import WorkflowUpdateRPCTimeoutOrCancelledError

T = TypeVar("T")
GIVE_UP_AFTER_S = 600.0
BACKOFF_S = (0.5, 1.0, 2.0, 5.0)


def new_message_id() -> str:
    return str(uuid.uuid4())


async def until_admitted(
    call: Callable[[], Awaitable[T]], give_up_after_s: float = GIVE_UP_AFTER_S
) -> T:
    """Repeat ``call`` (an Update with a fixed id) while the server times out admitting it;
    a caller's cancellation is not retried."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + give_up_after_s
    attempt = 0
    while True:
        try:
            return await call()
        except WorkflowUpdateRPCTimeoutOrCancelledError as err:
            if isinstance(err.__cause__, asyncio.CancelledError) or loop.time() >= deadline:
                raise
        await asyncio.sleep(BACKOFF_S[min(attempt, len(BACKOFF_S) - 1)])
        attempt += 1
