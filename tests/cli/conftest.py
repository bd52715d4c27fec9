"""The CLI tests drive commands and worker processes against the Temporal server with
clients the fixtures do not track. They get a server of their own: after
``test_send_without_a_worker_times_out_with_a_hint`` (a session whose Update no worker ever
admits, terminated at the end), a later ``temporal_env.sleep`` of two days on the same
time-skipping server hung for 30 s and failed, which broke the expiry tests that run after
this folder."""

from collections.abc import AsyncIterator

import pytest_asyncio
from temporalio.testing import WorkflowEnvironment

from durable_loop.testing.pytest_plugin import running_test_environment


@pytest_asyncio.fixture(scope="package", loop_scope="session")
async def temporal_env() -> AsyncIterator[WorkflowEnvironment]:
    async with running_test_environment() as env:
        yield env
