"""Running a worker process until SIGINT/SIGTERM, then shutting down gracefully
(in-flight activities finish or are cancelled; the workflows resume on another worker)."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable

from durable_loop.client.connect import connect
from durable_loop.store import StoreConfig, open_store
from durable_loop.tools.loader import load_registry
from durable_loop.worker.build_id import default_build_id
from durable_loop.worker.builder import WorkerDeps, build_worker, new_http_client
from durable_loop.worker.observability.setup import ObservabilitySettings, observability
from durable_loop.worker.settings import WorkerSettings
from durable_loop.worker.tool_sources import LoadedTools, load_tool_sources, tool_worker_pools


async def run_worker(
    settings: WorkerSettings,
    *,
    stop: asyncio.Event | None = None,
    announce: Callable[[str], None] = print,
) -> None:
    """Serve until ``stop`` is set (by default on SIGINT or SIGTERM)."""
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    installed: list[signal.Signals] = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop.set)
            installed.append(sig)
        except (NotImplementedError, RuntimeError, ValueError):
            pass  # not the main thread (tests): the caller sets ``stop``
    registry = load_registry(settings.tools)
    observed = observability(ObservabilitySettings.from_env(os.environ))
    store_config = StoreConfig(url=settings.db_url)
    client = await connect(settings.temporal)
    store = open_store(store_config)
    http = new_http_client(settings.tuning.max_concurrent_activities)
    loaded = LoadedTools(registry)
    build_id = settings.build_id
    if settings.deployment_name is not None and build_id is None:
        build_id = default_build_id()
    try:
        loaded = await load_tool_sources(registry, os.environ)
        deps = WorkerDeps(store=store, registry=registry, http=http)
        worker = build_worker(
            client,
            deps,
            task_queue=settings.task_queue,
            tuning=settings.tuning,
            interceptors=observed.interceptors,
            deployment_name=settings.deployment_name,
            build_id=build_id,
        )
        async with worker, tool_worker_pools(client, deps, settings.task_queue) as pools:
            tools = ", ".join(registry.names()) or "none"
            announce(
                _version_line(settings.deployment_name, build_id)
                + f"worker polling task queue {settings.task_queue!r} on "
                f"{settings.temporal.address} (namespace {settings.temporal.namespace}); "
                f"tools: {tools}" + (f"; tool queues: {', '.join(pools)}" if pools else "")
            )
            await stop.wait()
            announce("shutting down: finishing in-flight tasks...")
    finally:
        await loaded.close()
        observed.shutdown()
        await http.aclose()
        await store.close()
        for sig in installed:
            loop.remove_signal_handler(sig)
    announce("worker stopped")


def _version_line(deployment_name: str | None, build_id: str | None) -> str:
    if deployment_name is None:
        return ""
    return f"deployment {deployment_name!r} build {build_id!r}: "
