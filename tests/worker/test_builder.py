"""build_worker and build_tool_worker turn WorkerTuning into the SDK's Worker options."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from durable_loop.core.registry import ToolRegistry
from durable_loop.store import StoreConfig, open_store
from durable_loop.worker.builder import WorkerTuning, build_tool_worker, build_worker
from durable_loop.worker.deps import WorkerDeps, new_http_client
from durable_loop.worker.settings import WorkerSettings


@pytest.fixture
async def deps(tmp_path: Path):
    store = open_store(StoreConfig.sqlite_file(tmp_path / "store.db"))
    http = new_http_client()
    yield WorkerDeps(store=store, registry=ToolRegistry(), http=http, environ={})
    await http.aclose()
    await store.close()


async def test_the_sticky_timeout_reaches_the_worker(temporal_env, deps):
    tuning = WorkerTuning(sticky_timeout_s=2.5)
    worker = build_worker(temporal_env.client, deps, task_queue="sticky", tuning=tuning)
    timeout = worker.config()["sticky_queue_schedule_to_start_timeout"]
    assert timeout == timedelta(seconds=2.5)


async def test_without_it_the_sdk_default_stays(temporal_env, deps):
    worker = build_worker(temporal_env.client, deps, task_queue="sticky-default")
    assert worker.config()["sticky_queue_schedule_to_start_timeout"] == timedelta(seconds=10)


async def test_a_tool_worker_has_no_sticky_queue_to_time_out(temporal_env, deps):
    tuning = WorkerTuning(sticky_timeout_s=2.5, max_concurrent_activities=7)
    worker = build_tool_worker(temporal_env.client, deps, task_queue="tools", tuning=tuning)
    assert worker.config()["max_concurrent_activities"] == 7


def test_the_worker_command_passes_it_through_its_settings():
    settings = WorkerSettings.load(tuning={"sticky_timeout_s": 3.0}, db_url="sqlite://")
    assert settings.tuning.sticky_timeout_s == 3.0
    with pytest.raises(ValueError):
        WorkerTuning(sticky_timeout_s=0)
