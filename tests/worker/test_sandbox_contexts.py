"""The plugin's sandbox reads the SDK's serialization and external store contexts from the
in-sandbox instance directly: they must be the ones the SDK's own sandbox gives."""

from __future__ import annotations

import dataclasses

from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

from bench.session_start_cost import probe_details
from durable_loop.worker.sandbox import ContextsOutsideRunner, sandboxed_runner
from durable_loop.workflows.session import SessionWorkflow
from tests.worker.test_sandbox import plugin_runner


class UsersRunner(SandboxedWorkflowRunner):
    pass


def test_the_plugin_runs_workflows_with_contexts_read_outside():
    runner = plugin_runner()
    assert type(runner) is ContextsOutsideRunner
    assert runner.restrictions == sandboxed_runner(None).restrictions


async def test_contexts_read_outside_are_the_sdks():
    ours = plugin_runner().create_instance(probe_details(SessionWorkflow))
    sdks = SandboxedWorkflowRunner(restrictions=plugin_runner().restrictions).create_instance(
        probe_details(SessionWorkflow)
    )
    context = ours.get_serialization_context(None)
    assert context is not None
    assert context == sdks.get_serialization_context(None)
    assert ours.get_external_store_context(None) == sdks.get_external_store_context(None)


def test_a_users_own_sandboxed_runner_keeps_its_class():
    mine = UsersRunner()
    runner = sandboxed_runner(mine)
    assert type(runner) is UsersRunner
    assert "durable_loop.core" in runner.restrictions.passthrough_modules


def test_worker_level_failure_types_carry_over():
    sdk = SandboxedWorkflowRunner()
    sdk.set_worker_level_failure_exception_types([ValueError])
    runner = sandboxed_runner(sdk)
    assert isinstance(runner, ContextsOutsideRunner)
    assert list(runner._worker_level_failure_exception_types) == [ValueError]
    assert dataclasses.replace(runner).restrictions == runner.restrictions
