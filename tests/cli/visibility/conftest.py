"""``durable-loop sessions`` and ``pending`` across sessions read the visibility store,
which the time-skipping test server does not have: these tests run on the embedded dev
server, whatever ``DURABLE_LOOP_TEST_SERVER`` says."""

from collections.abc import AsyncIterator

import pytest_asyncio
from temporalio.testing import WorkflowEnvironment

from durable_loop.cli.devserver import start_local_environment
from durable_loop.client.search_attributes import ensure_registered


@pytest_asyncio.fixture(scope="package", loop_scope="session")
async def temporal_env() -> AsyncIterator[WorkflowEnvironment]:
    env = await start_local_environment()
    try:
        assert await ensure_registered(env.client)
        yield env
    finally:
        await env.shutdown()
