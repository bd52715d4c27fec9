"""Where one tool call runs, decided from its spec (workflow code, deterministic).

* ``local``: a Temporal local activity in the workflow's own worker, no server round trip
  (for short, side-effect free tools).
* ``long_running``: an activity on its own task queue (``spec.task_queue`` or
  ``<queue>-long``, served by a separate worker pool) that heartbeats; when the session is
  cancelled the workflow requests its cancellation and waits until the tool has stopped.
* otherwise: a regular activity, on ``spec.task_queue`` when an ensemble sets one.

A cancelled call (its message or its session cancelled) is waited for until the tool has
stopped, so a tool that finishes anyway has its result stored, not raced by the workflow's
``TOOL_CALL_CANCELLED`` envelope (see ``run_control``).
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.workflow import ActivityCancellationType

with workflow.unsafe.imports_passed_through():
    from durable_loop.core import names
    from durable_loop.core.activity_contracts import ToolRunInput, ToolRunOutput
    from durable_loop.core.activity_refs import RUN_LONG_TOOL, RUN_TOOL
    from durable_loop.core.config import RuntimeConfig
    from durable_loop.core.tools import ToolSpec
from durable_loop.workflows.activity_calls import run_activity, run_local_activity

DEFAULT_HEARTBEAT_TIMEOUT_S = 30.0
SCHEDULING_SLACK_S = 10.0
WAIT = ActivityCancellationType.WAIT_CANCELLATION_COMPLETED


def heartbeat_timeout(config: RuntimeConfig) -> timedelta | None:
    """The LLM and tool activities heartbeat, so a dead worker is noticed within this."""
    seconds = config.retries.heartbeat_timeout_s
    return timedelta(seconds=seconds) if seconds else None


async def run_tool_activity(
    spec: ToolSpec,
    inp: ToolRunInput,
    *,
    timeout_s: float,
    retry: RetryPolicy,
    config: RuntimeConfig | None = None,
) -> ToolRunOutput:
    start_to_close = timedelta(seconds=timeout_s + SCHEDULING_SLACK_S)
    summary = f"tool: {spec.name}"
    if spec.local:
        return await run_local_activity(
            RUN_TOOL,
            inp,
            start_to_close_timeout=start_to_close,
            retry_policy=retry,
            cancellation_type=WAIT,
            summary=summary,
        )
    if spec.long_running:
        configured = config.retries.heartbeat_timeout_s if config else None
        heartbeat = spec.heartbeat_timeout_s or configured or DEFAULT_HEARTBEAT_TIMEOUT_S
        return await run_activity(
            RUN_LONG_TOOL,
            inp,
            task_queue=spec.task_queue or names.long_running_queue(workflow.info().task_queue),
            start_to_close_timeout=start_to_close,
            heartbeat_timeout=timedelta(seconds=heartbeat),
            retry_policy=retry,
            cancellation_type=WAIT,
            summary=f"{summary} (long-running)",
        )
    return await run_activity(
        RUN_TOOL,
        inp,
        task_queue=spec.task_queue,
        start_to_close_timeout=start_to_close,
        heartbeat_timeout=heartbeat_timeout(config) if config else None,
        retry_policy=retry,
        cancellation_type=WAIT,
        summary=summary,
    )
