"""Sending by Update without losing the message under overload.

An Update becomes durable only once a worker accepts it. When the server cannot get it
accepted in time (overloaded: bench/throughput.py saw ~3% of 1,000 concurrent
update-with-start calls fail this way on 2 cores) the SDK raises
``WorkflowUpdateRPCTimeoutOrCancelledError`` and the message may never have been admitted;
while the workflow's task is being retried the server refuses Updates outright
(``FAILED_PRECONDITION``; 3 of 10,000 in bench/parked_sessions.py); and when the worker
holding the session dies, the server aborts the Updates it had admitted but not yet got
accepted (``UNAVAILABLE``, "workflow update was aborted"; the chaos scenario
``many_workers_kill`` saw it for 1 of 300 update-with-start calls).
Repeating the call with the same update id is safe: an admitted Update is joined, not
repeated, and the session workflow also deduplicates by message id.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from typing import TypeVar

from temporalio.client import WorkflowUpdateRPCTimeoutOrCancelledError
from temporalio.service import RPCError, RPCStatusCode

from durable_loop.core.canonical_json import sha256_hex

T = TypeVar("T")
GIVE_UP_AFTER_S = 600.0
BACKOFF_S = (0.5, 1.0, 2.0, 5.0)


def workflow_task_failing(err: RPCError) -> bool:
    """The server refuses new Updates while the workflow's task is being retried (it failed
    or timed out: e.g. a worker starved of CPU tripped the 2 s deadlock detector); it
    recovers by itself."""
    refused = "Workflow Task in failed state" in err.message
    return err.status == RPCStatusCode.FAILED_PRECONDITION and refused


def new_message_id() -> str:
    return str(uuid.uuid4())


def message_update_id(message_id: str, text: str) -> str:
    """The ``send_message`` Update's id: the message id and a digest of the text. The
    server answers a repeated Update id with the first outcome without asking the
    workflow, so a message id reused with another text needs another Update id for the
    session's validator to see it (and refuse it: ``IDEMPOTENCY_KEY_REUSED``)."""
    return f"{message_id}#{sha256_hex(text)[:16]}"


def update_aborted(err: RPCError) -> bool:
    """The server dropped an admitted, not yet accepted Update (its workflow task timed
    out or failed, e.g. the worker holding it was killed) and asks for it again."""
    return err.status == RPCStatusCode.UNAVAILABLE and "update was aborted" in err.message


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
        except RPCError as err:
            if not (workflow_task_failing(err) or update_aborted(err)) or loop.time() >= deadline:
                raise
        await asyncio.sleep(BACKOFF_S[min(attempt, len(BACKOFF_S) - 1)])
        attempt += 1
