"""The worker process of ``bench.session_start_cost`` (run as ``--worker CONFIG``): a
durable-loop worker under one sandbox configuration whose workflow runner records the thread
CPU of each session's first workflow task, and the heap one new workflow instance holds."""

from __future__ import annotations

import asyncio
import gc
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel
from temporalio.api.common.v1 import Payloads
from temporalio.api.failure.v1 import Failure
from temporalio.bridge.proto.workflow_activation import WorkflowActivation
from temporalio.bridge.proto.workflow_completion import WorkflowActivationCompletion
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter, SerializationContext, StorageDriverStoreContext
from temporalio.worker import (
    UnsandboxedWorkflowRunner,
    Worker,
    WorkflowInstance,
    WorkflowInstanceDetails,
    WorkflowRunner,
)
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions
from temporalio.worker.workflow_sandbox._runner import _fake_info
from temporalio.workflow import Info, _Definition

from durable_loop.core.registry import ToolRegistry
from durable_loop.store import StoreConfig, open_store
from durable_loop.worker.deps import WorkerDeps, new_http_client
from durable_loop.worker.plugin import DurableLoopPlugin
from durable_loop.worker.sandbox import CORE_MODULES, sandboxed_runner
from durable_loop.workflows.session import SessionWorkflow

ConfigName = Literal[
    "sdk_default", "core_passthrough", "durable_loop", "all_passthrough", "unsandboxed"
]
CONFIGS: tuple[ConfigName, ...] = (
    "sdk_default",
    "core_passthrough",
    "durable_loop",
    "all_passthrough",
    "unsandboxed",
)
HEAP = "heap"
"""A line the driver sends for the worker's traced heap (any other line stops it)."""
PROBE_INSTANCES = 20


def runner_for(config: ConfigName) -> WorkflowRunner:
    if config == "sdk_default":
        return SandboxedWorkflowRunner(restrictions=SandboxRestrictions.default)
    if config == "core_passthrough":
        restrictions = SandboxRestrictions.default.with_passthrough_modules(CORE_MODULES)
        return SandboxedWorkflowRunner(restrictions=restrictions)
    if config == "durable_loop":
        return sandboxed_runner(None)
    if config == "all_passthrough":
        return sandboxed_runner(None, everything=True)
    return UnsandboxedWorkflowRunner()


class _TimedInstance(WorkflowInstance):
    def __init__(
        self, inner: WorkflowInstance, create_s: float, record: Callable[[float], None]
    ) -> None:
        self.inner = inner
        self.create_s = create_s
        self.record: Callable[[float], None] | None = record

    def activate(self, act: WorkflowActivation) -> WorkflowActivationCompletion:
        started = time.thread_time()
        completion = self.inner.activate(act)
        if self.record is not None:
            self.record(self.create_s + time.thread_time() - started)
            self.record = None
        return completion

    def get_serialization_context(self, command_info: object) -> SerializationContext | None:
        return self.inner.get_serialization_context(command_info)  # type: ignore[arg-type]

    def get_external_store_context(self, command_info: object) -> StorageDriverStoreContext:
        return self.inner.get_external_store_context(command_info)  # type: ignore[arg-type]

    def get_info(self) -> Info:
        return self.inner.get_info()

    def get_thread_id(self) -> int | None:
        return self.inner.get_thread_id()


class TimedRunner(WorkflowRunner):
    """A workflow runner that records the thread CPU seconds of each instance's creation
    plus first activation: the CPU of a new session's first workflow task."""

    def __init__(self, inner: WorkflowRunner) -> None:
        self.inner = inner
        self.first_task_s: list[float] = []

    def prepare_workflow(self, defn: object) -> None:
        self.inner.prepare_workflow(defn)  # type: ignore[arg-type]

    def create_instance(self, det: WorkflowInstanceDetails) -> WorkflowInstance:
        started = time.thread_time()
        inner = self.inner.create_instance(det)
        return _TimedInstance(inner, time.thread_time() - started, self.first_task_s.append)

    def set_worker_level_failure_exception_types(self, types: object) -> None:
        self.inner.set_worker_level_failure_exception_types(types)  # type: ignore[arg-type]


class WorkerStats(BaseModel):
    first_task_ms: list[float]
    instance_kb: float
    """Python heap held by one new session workflow instance (tracemalloc)."""


def instance_kb(runner: WorkflowRunner, count: int = PROBE_INSTANCES) -> float:
    """The Python heap one new session workflow instance holds under ``runner``: the
    sandbox's own modules and the workflow object, measured by tracemalloc over ``count``
    instances created the way the worker creates them (before the worker serves, so no
    other work is traced). Must be called with an event loop running."""
    details = probe_details(SessionWorkflow)
    runner.prepare_workflow(details.defn)
    runner.create_instance(details)  # the first one imports on the host
    gc.collect()
    tracing = tracemalloc.is_tracing()  # --trace-heap: traced from the start
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        held = [runner.create_instance(details) for _ in range(count)]
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        if not tracing:
            tracemalloc.stop()
    del held
    return round(grown / count / 1024, 1)


def probe_details(workflow: type) -> WorkflowInstanceDetails:
    """Details for a workflow instance that is created but never activated (the SDK's own
    validation in ``prepare_workflow`` does the same)."""
    default = DataConverter.default
    return WorkflowInstanceDetails(
        payload_converter_factory=default._new_payload_converter,
        failure_converter_class=default.failure_converter_class,
        interceptor_classes=[],
        defn=_Definition.must_from_class(workflow),
        info=_fake_info,
        randomness_seed=-1,
        extern_functions={},
        disable_eager_activity_execution=False,
        worker_level_failure_exception_types=[],
        patch_activation_callback=None,
        last_completion_result=Payloads(),
        last_failure=Failure(),
    )


async def serve(config: ConfigName, address: str, queue: str, db: Path, cache: int) -> None:
    """The worker process: prints ``ready``, runs until stdin closes or says ``stop``,
    then prints its :class:`WorkerStats` as one JSON line."""
    client = await Client.connect(address, data_converter=pydantic_data_converter)
    store = open_store(StoreConfig.sqlite_file(db))
    http = new_http_client()
    deps = WorkerDeps(store=store, registry=ToolRegistry(), http=http, environ={})
    inner = runner_for(config)
    probed = instance_kb(inner)
    runner = TimedRunner(inner)
    worker = Worker(
        client,
        task_queue=queue,
        plugins=[DurableLoopPlugin(deps)],
        workflow_runner=runner,
        max_cached_workflows=cache,
    )
    try:
        async with worker:
            print("ready", flush=True)
            while (await asyncio.to_thread(sys.stdin.readline)).strip() == HEAP:
                gc.collect()
                traced = tracemalloc.get_traced_memory()[0] if tracemalloc.is_tracing() else 0
                print(round(traced / 2**20, 2), flush=True)
    finally:
        await http.aclose()
        await store.close()
    first = [round(1000 * s, 3) for s in runner.first_task_s]
    stats = WorkerStats(first_task_ms=first, instance_kb=probed)
    print(stats.model_dump_json(), flush=True)
