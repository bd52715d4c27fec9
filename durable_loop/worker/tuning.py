"""The worker's concurrency knobs, apart from the builder so that reading settings (every
CLI command does) imports neither the workflows nor the activities nor the store."""

from __future__ import annotations

from pydantic import BaseModel, Field


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
        description="Pass all of durable_loop through the workflow sandbox, the modules "
        "that define the workflows too. By default (durable_loop.worker.sandbox) only those "
        "are imported again for every workflow run, with shared code: ~3.5 ms of CPU for a "
        "session's first workflow task; passing them through saves ~2 ms more "
        "(bench/session_start_cost.py), and their determinism then rests on the rules and "
        "the replay tests alone.",
    )
