"""An Update the server timed out admitting is sent again with the same id; a caller's
cancellation is not."""

from __future__ import annotations

import asyncio

import pytest
from temporalio.client import WorkflowUpdateRPCTimeoutOrCancelledError
from temporalio.service import RPCError, RPCStatusCode

from durable_loop.client import update_retry
from durable_loop.client.update_retry import until_admitted


def timed_out() -> WorkflowUpdateRPCTimeoutOrCancelledError:
    err = WorkflowUpdateRPCTimeoutOrCancelledError()
    err.__cause__ = RPCError("context deadline exceeded", RPCStatusCode.DEADLINE_EXCEEDED, b"")
    return err


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch):
    monkeypatch.setattr(update_retry, "BACKOFF_S", (0.0,))


async def test_a_timed_out_update_is_sent_again_until_admitted():
    calls = []

    async def call() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise timed_out()
        return "reply"

    assert await until_admitted(call) == "reply"
    assert len(calls) == 3


async def test_it_gives_up_after_its_deadline():
    async def call() -> str:
        raise timed_out()

    with pytest.raises(WorkflowUpdateRPCTimeoutOrCancelledError):
        await until_admitted(call, give_up_after_s=0.05)


async def test_a_cancelled_caller_is_not_retried():
    calls = []

    async def call() -> str:
        calls.append(1)
        err = WorkflowUpdateRPCTimeoutOrCancelledError()
        err.__cause__ = asyncio.CancelledError()
        raise err

    with pytest.raises(WorkflowUpdateRPCTimeoutOrCancelledError):
        await until_admitted(call)
    assert calls == [1]


async def test_an_update_refused_while_the_workflow_task_is_retried_is_sent_again():
    calls = []

    async def call() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise RPCError(
                "Unable to perform workflow execution update due to Workflow Task in failed state.",
                RPCStatusCode.FAILED_PRECONDITION,
                b"",
            )
        return "reply"

    assert await until_admitted(call) == "reply"
    assert len(calls) == 2


async def test_an_update_the_server_aborted_is_sent_again():
    """A worker killed while holding the session: the server aborts the admitted Update."""
    calls = []

    async def call() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise RPCError("workflow update was aborted", RPCStatusCode.UNAVAILABLE, b"")
        return "reply"

    assert await until_admitted(call) == "reply"
    assert len(calls) == 2


async def test_other_rpc_errors_are_not_retried():
    async def call() -> str:
        raise RPCError("workflow not found", RPCStatusCode.NOT_FOUND, b"")

    with pytest.raises(RPCError, match="not found"):
        await until_admitted(call)
