"""DurableLoopPlugin: what it gives a client, a worker and a replayer, and that
build_worker assembles its worker through it."""

from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path

import pytest
from temporalio.client import Client
from temporalio.contrib.pydantic import PydanticPayloadConverter, pydantic_data_converter
from temporalio.converter import DataConverter, DefaultFailureConverterWithEncodedAttributes
from temporalio.worker import Replayer, UnsandboxedWorkflowRunner, Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from durable_loop.client.codec import AesGcmCodec, KeyRing, new_key
from durable_loop.core import activity_refs
from durable_loop.core.registry import ToolRegistry
from durable_loop.store import StoreConfig, open_store
from durable_loop.store.workspace import open_workspace_store
from durable_loop.worker.builder import WorkerTuning, build_worker, worker_options
from durable_loop.worker.deps import WorkerDeps, new_http_client
from durable_loop.worker.plugin import WORKFLOWS, DurableLoopPlugin, activities_for
from durable_loop.workflows.child_session import ChildSessionWorkflow
from durable_loop.workflows.session import SessionWorkflow
from durable_loop.workflows.sub_agent_workflow import SubAgentWorkflow

KEYS = new_key("k1")


@pytest.fixture
async def deps(tmp_path: Path):
    store = open_store(StoreConfig.sqlite_file(tmp_path / "store.db"))
    http = new_http_client()
    yield WorkerDeps(store=store, registry=ToolRegistry(), http=http, environ={})
    await http.aclose()
    await store.close()


def client_with(temporal_env, **changes) -> Client:
    config = temporal_env.client.config()
    config.update(changes)
    return Client(**config)


def activity_names(worker: Worker) -> list[str]:
    return sorted(a.__name__ for a in worker.config(active_config=True)["activities"])


def test_the_client_gets_the_pydantic_converter():
    plugin = DurableLoopPlugin()
    assert plugin._data_converter(DataConverter.default) is pydantic_data_converter
    assert plugin._data_converter(None) is pydantic_data_converter


def test_codec_keys_give_the_encrypting_converter():
    for keys in (KEYS, KeyRing.parse(KEYS)):
        converter = DurableLoopPlugin(codec_keys=keys)._data_converter(DataConverter.default)
        assert converter.payload_converter_class is PydanticPayloadConverter
        assert isinstance(converter.payload_codec, AesGcmCodec)
        assert converter.failure_converter_class is DefaultFailureConverterWithEncodedAttributes


def test_a_codec_the_client_has_is_kept_without_keys():
    theirs = dataclasses.replace(
        DataConverter.default, payload_codec=AesGcmCodec(KeyRing.parse(KEYS))
    )
    converter = DurableLoopPlugin()._data_converter(theirs)
    assert converter.payload_codec is theirs.payload_codec
    assert converter.payload_converter_class is PydanticPayloadConverter


def test_sandbox_passes_the_pure_core_through():
    plugin = DurableLoopPlugin()
    runner = plugin._workflow_runner(SandboxedWorkflowRunner())
    assert isinstance(runner, SandboxedWorkflowRunner)
    assert "durable_loop.core" in runner.restrictions.passthrough_modules
    assert "durable_loop" not in runner.restrictions.passthrough_modules
    everything = DurableLoopPlugin(sandbox_passthrough=True)._workflow_runner(None)
    assert isinstance(everything, SandboxedWorkflowRunner)
    assert "durable_loop" in everything.restrictions.passthrough_modules
    # the user's own restrictions stay; an unsandboxed runner is left alone
    theirs = SandboxedWorkflowRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_modules("myapp")
    )
    kept = plugin._workflow_runner(theirs)
    assert isinstance(kept, SandboxedWorkflowRunner)
    assert {"myapp", "durable_loop.core"} <= kept.restrictions.passthrough_modules
    unsandboxed = UnsandboxedWorkflowRunner()
    assert plugin._workflow_runner(unsandboxed) is unsandboxed


async def test_a_worker_on_a_plugged_client_runs_durable_loop_beside_the_users_own(
    temporal_env, deps
):
    client = client_with(temporal_env, plugins=[DurableLoopPlugin(deps)])
    assert client.data_converter.payload_converter_class is PydanticPayloadConverter
    worker = Worker(client, task_queue="plugged", workflows=[])
    config = worker.config(active_config=True)
    assert list(config["workflows"]) == [SessionWorkflow, ChildSessionWorkflow, SubAgentWorkflow]
    assert activity_names(worker) == sorted(a.__name__ for a in activities_for(deps))
    assert len(config["activities"]) == len(activity_refs.ALL)


async def test_the_plugin_on_both_client_and_worker_registers_everything_once(temporal_env, deps):
    plugin = DurableLoopPlugin(deps)
    client = client_with(temporal_env, plugins=[plugin])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the SDK warns that the plugin is given twice
        worker = Worker(client, task_queue="twice", plugins=[plugin])
    assert list(worker.config(active_config=True)["workflows"]) == list(WORKFLOWS)
    assert len(worker.config(active_config=True)["activities"]) == len(activity_refs.ALL)


async def test_two_plugins_with_deps_on_client_and_worker_are_refused(temporal_env, deps):
    client = client_with(temporal_env, plugins=[DurableLoopPlugin(deps)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="both the client and the worker"):
            build_worker(client, deps, task_queue="twice-built")
    converter_only = client_with(temporal_env, plugins=[DurableLoopPlugin()])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        worker = build_worker(converter_only, deps, task_queue="converter-only")
    assert list(worker.config(active_config=True)["workflows"]) == list(WORKFLOWS)


async def test_a_worker_plugin_refuses_a_client_without_the_pydantic_converter(temporal_env, deps):
    plain = client_with(temporal_env, data_converter=DataConverter.default)
    with pytest.raises(ValueError, match=r"Client\.connect"):
        Worker(plain, task_queue="plain", plugins=[DurableLoopPlugin(deps)])


async def test_without_deps_a_worker_gets_no_durable_loop_workflows(temporal_env):
    client = client_with(temporal_env, plugins=[DurableLoopPlugin()])
    with pytest.raises(ValueError, match="At least one activity"):
        Worker(client, task_queue="nothing")


async def test_build_worker_assembles_its_worker_through_the_plugin(temporal_env, deps):
    worker = build_worker(
        temporal_env.client, deps, task_queue="built", tuning=WorkerTuning(sandbox_passthrough=True)
    )
    config = worker.config(active_config=True)
    assert [type(p) for p in config["plugins"]] == [DurableLoopPlugin]
    assert list(config["workflows"]) == list(WORKFLOWS)
    assert len(config["activities"]) == len(activity_refs.ALL)
    runner = config["workflow_runner"]
    assert isinstance(runner, SandboxedWorkflowRunner)
    assert "durable_loop" in runner.restrictions.passthrough_modules


async def test_build_worker_gives_the_worker_every_knob_the_tuning_sets(temporal_env, deps):
    tuning = WorkerTuning(
        max_cached_workflows=7, workflow_task_pollers=3, activity_task_pollers=4,
        sandbox_passthrough=True,
    )  # fmt: skip
    assert worker_options(tuning) == {
        "max_cached_workflows": 7,
        "max_concurrent_workflow_task_polls": 3,
        "max_concurrent_activity_task_polls": 4,
    }
    config = build_worker(temporal_env.client, deps, task_queue="knobs", tuning=tuning).config(
        active_config=True
    )
    assert config["max_cached_workflows"] == 7
    assert config["max_concurrent_workflow_task_polls"] == 3
    assert config["max_concurrent_activity_task_polls"] == 4


def test_a_replayer_gets_the_workflows_and_the_converter():
    replayer = Replayer(workflows=[], plugins=[DurableLoopPlugin()])
    config = replayer.config(active_config=True)
    assert list(config["workflows"]) == list(WORKFLOWS)
    assert config["data_converter"] is pydantic_data_converter


async def test_a_discarded_late_body_is_audited_in_the_workspace_store_the_worker_was_given(
    tmp_path: Path, deps
):
    """With the workspace on its own database, a once call's discarded late body goes to
    that database's audit (where ``durable-loop workspace --audit`` reads it), not to the
    transcript database's; without one both share the transcript database."""
    own = open_workspace_store(StoreConfig.sqlite_file(tmp_path / "workspace.db"))
    try:
        split = dataclasses.replace(deps, workspace=own)
        for given, expected in ((split, own), (deps, None)):
            bound = {a.__name__: a for a in activities_for(given)}
            run_tool, decision = bound["run_tool"], bound["record_decision"]
            audit = run_tool.__self__.once.audit
            assert audit is decision.__self__.store
            assert audit is expected if expected else audit.db is deps.store.db
    finally:
        await own.close()
