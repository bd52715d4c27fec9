"""Cancelling running tool activities runs on the embedded dev server, whatever
``DURABLE_LOOP_TEST_SERVER`` says: the time-skipping test server marks a running activity
cancelled at once, and when the activity then completes anyway (a sync tool finishing, or a
call finishing as the cancel goes out) it records an invalid history (ActivityTaskStarted
right after WorkflowTaskScheduled), on which the Replayer's poller dies and the replay on
teardown hangs."""

from collections.abc import AsyncIterator

import pytest_asyncio
from temporalio.testing import WorkflowEnvironment

from durable_loop.cli.devserver import start_local_environment


@pytest_asyncio.fixture(scope="package", loop_scope="session")
async def temporal_env() -> AsyncIterator[WorkflowEnvironment]:
    env = await start_local_environment()
    try:
        yield env
    finally:
        await env.shutdown()
