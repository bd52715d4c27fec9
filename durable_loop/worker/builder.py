"""Building workers: durable-loop's plugin on a tuned Worker, and tool-only worker pools."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from pydantic import BaseModel, Field
from temporalio.client import Client
from temporalio.worker import Interceptor, Worker

from durable_loop.activities.heartbeat import CANCEL_NOTICE
from durable_loop.activities.long_running import LongToolActivities
from durable_loop.activities.tools import ToolActivities
from durable_loop.core.constants import TASK_QUEUE
from durable_loop.worker.deps import DEFAULT_HTTP_CONNECTIONS, WorkerDeps, new_http_client
from durable_loop.worker.plugin import DurableLoopPlugin, activities_for

__all__ = [
    "DEFAULT_HTTP_CONNECTIONS",
    "WorkerDeps",
    "WorkerTuning",
    "activities_for",
    "build_tool_worker",
    "build_worker",
    "new_http_client",
]


class WorkerTuning(BaseModel):
    """Worker concurrency knobs; ``None`` keeps the SDK default."""

    max_concurrent_activities: int | None = Field(default=None, ge=1)
    max_concurrent_workflow_tasks: int | None = Field(default=None, ge=1)
    max_concurrent_local_activities: int | None = Field(default=None, ge=1)
    max_cached_workflows: int | None = Field(default=None, ge=0)
    workflow_task_pollers: int | None = Field(default=None, ge=1)
    activity_task_pollers: int | None = Field(default=None, ge=1)
    sticky_timeout_s: float | None = Field(
        default=None,
        gt=0,
        description="How long a session's workflow task waits on this worker's sticky queue "
        "before any worker may take it (SDK default 10 s): what a session held by a worker "
        "that died waits before another worker continues it (durable-loop chaos -s "
        "many_workers_kill).",
    )
    sandbox_passthrough: bool | None = Field(
        default=None,
        description="Import durable_loop once for every workflow sandbox instead of once per "
        "workflow instance: a new session or a cache miss costs about half the CPU "
        "(bench/throughput.py). Determinism then rests on the rules and the replay tests "
        "alone for durable_loop's own modules.",
    )


def build_worker(
    client: Client,
    deps: WorkerDeps,
    *,
    task_queue: str = TASK_QUEUE,
    tuning: WorkerTuning | None = None,
    interceptors: Sequence[Interceptor] = (),
) -> Worker:
    """A worker running durable-loop's workflows and activities: :class:`DurableLoopPlugin`
    on a Worker tuned by ``tuning``. ``client`` must use durable-loop's data converter
    (:func:`durable_loop.connect`). ``interceptors``: e.g. tracing and metrics
    (``durable_loop.worker.observability``)."""
    tuning = tuning or WorkerTuning()
    options = {k: v for k, v in tuning.model_dump().items() if v is not None}
    plugin = DurableLoopPlugin(
        deps, sandbox_passthrough=bool(options.pop("sandbox_passthrough", False))
    )
    pollers = {}
    if "workflow_task_pollers" in options:
        pollers["max_concurrent_workflow_task_polls"] = options.pop("workflow_task_pollers")
    if "activity_task_pollers" in options:
        pollers["max_concurrent_activity_task_polls"] = options.pop("activity_task_pollers")
    if "sticky_timeout_s" in options:
        options["sticky_queue_schedule_to_start_timeout"] = timedelta(
            seconds=options.pop("sticky_timeout_s")
        )
    return Worker(
        client,
        task_queue=task_queue,
        plugins=[plugin],
        interceptors=list(interceptors),
        **options,
        **pollers,
    )


def build_tool_worker(
    client: Client,
    deps: WorkerDeps,
    *,
    task_queue: str,
    tuning: WorkerTuning | None = None,
    interceptors: Sequence[Interceptor] = (),
) -> Worker:
    """A worker pool that only runs tool calls: for long-running tools (by default on
    ``long_running_queue(<session queue>)``) and for ensembles placed on their own queue."""
    tools = ToolActivities(deps.store, deps.registry)
    options = {k: v for k, v in (tuning or WorkerTuning()).model_dump().items() if v is not None}
    options.pop("sandbox_passthrough", None)
    options.pop("workflow_task_pollers", None)
    options.pop("max_concurrent_workflow_tasks", None)
    options.pop("max_cached_workflows", None)
    options.pop("sticky_timeout_s", None)
    if "activity_task_pollers" in options:
        options["max_concurrent_activity_task_polls"] = options.pop("activity_task_pollers")
    return Worker(
        client,
        task_queue=task_queue,
        activities=[tools.run_tool, LongToolActivities(tools).run_long_tool],
        interceptors=list(interceptors),
        max_heartbeat_throttle_interval=CANCEL_NOTICE,
        default_heartbeat_throttle_interval=CANCEL_NOTICE,
        **options,
    )
