"""Building workers: durable-loop's plugin on a tuned Worker, and tool-only worker pools."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import TypedDict, cast

from temporalio.client import Client
from temporalio.worker import Interceptor, Worker

from durable_loop.activities.heartbeat import CANCEL_NOTICE
from durable_loop.activities.long_running import LongToolActivities
from durable_loop.activities.tools import ToolActivities
from durable_loop.core.constants import TASK_QUEUE
from durable_loop.worker.deps import DEFAULT_HTTP_CONNECTIONS, WorkerDeps, new_http_client
from durable_loop.worker.plugin import DurableLoopPlugin, activities_for
from durable_loop.worker.tuning import WorkerTuning

__all__ = [
    "DEFAULT_HTTP_CONNECTIONS",
    "WorkerDeps",
    "WorkerOptions",
    "WorkerTuning",
    "activities_for",
    "build_tool_worker",
    "build_worker",
    "new_http_client",
    "worker_options",
]


def build_worker(
    client: Client,
    deps: WorkerDeps,
    *,
    task_queue: str = TASK_QUEUE,
    tuning: WorkerTuning | None = None,
    interceptors: Sequence[Interceptor] = (),
    deployment_name: str | None = None,
    build_id: str | None = None,
    workflows: Sequence[type] = (),
) -> Worker:
    """A worker running durable-loop's workflows and activities: :class:`DurableLoopPlugin`
    on a Worker tuned by ``tuning``. ``client`` must use durable-loop's data converter
    (:func:`durable_loop.connect`). ``interceptors``: e.g. tracing and metrics
    (``durable_loop.worker.observability``). ``deployment_name`` (and ``build_id``): a
    versioned worker (docs/versioning.md), else an unversioned one. ``workflows``: the
    user's own, beside durable-loop's (one under a durable-loop name replaces it)."""
    tuning = tuning or WorkerTuning()
    plugin = DurableLoopPlugin(
        deps,
        sandbox_passthrough=bool(tuning.sandbox_passthrough),
        deployment_name=deployment_name,
        build_id=build_id,
    )
    return Worker(
        client,
        task_queue=task_queue,
        workflows=list(workflows),
        plugins=[plugin],
        interceptors=list(interceptors),
        **worker_options(tuning),
    )


class WorkerOptions(TypedDict, total=False):
    """The ``Worker`` keyword arguments a :class:`WorkerTuning` sets."""

    max_concurrent_activities: int
    max_concurrent_workflow_tasks: int
    max_concurrent_local_activities: int
    max_cached_workflows: int
    max_concurrent_workflow_task_polls: int
    max_concurrent_activity_task_polls: int
    sticky_queue_schedule_to_start_timeout: timedelta


def worker_options(tuning: WorkerTuning) -> WorkerOptions:
    """``Worker`` keyword arguments for the concurrency knobs ``tuning`` sets (the sandbox
    setting is the plugin's)."""
    options = tuning.model_dump(exclude_none=True, exclude={"sandbox_passthrough"})
    renamed = {
        "workflow_task_pollers": "max_concurrent_workflow_task_polls",
        "activity_task_pollers": "max_concurrent_activity_task_polls",
    }
    if "sticky_timeout_s" in options:
        options["sticky_queue_schedule_to_start_timeout"] = timedelta(
            seconds=options.pop("sticky_timeout_s")
        )
    return cast(WorkerOptions, {renamed.get(name, name): v for name, v in options.items()})


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
    tools = ToolActivities(deps.store, deps.registry, deps.workspace)
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
