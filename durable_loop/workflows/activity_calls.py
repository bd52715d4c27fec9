"""Calling an activity from workflow code through its typed reference: the argument must be
the reference's input model and the result comes back as its output model."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.workflow import ActivityCancellationType

with workflow.unsafe.imports_passed_through():
    from durable_loop.core.activity_refs import ActivityRef, In, Out


async def run_activity(
    ref: ActivityRef[In, Out],
    arg: In,
    *,
    start_to_close_timeout: timedelta,
    task_queue: str | None = None,
    heartbeat_timeout: timedelta | None = None,
    retry_policy: RetryPolicy | None = None,
    cancellation_type: ActivityCancellationType = ActivityCancellationType.TRY_CANCEL,
    summary: str | None = None,
) -> Out:
    return await workflow.execute_activity(
        ref.name,
        arg,
        result_type=ref.output,
        task_queue=task_queue,
        start_to_close_timeout=start_to_close_timeout,
        heartbeat_timeout=heartbeat_timeout,
        retry_policy=retry_policy,
        cancellation_type=cancellation_type,
        summary=summary,
    )


async def run_local_activity(
    ref: ActivityRef[In, Out],
    arg: In,
    *,
    start_to_close_timeout: timedelta,
    retry_policy: RetryPolicy | None = None,
    cancellation_type: ActivityCancellationType = ActivityCancellationType.TRY_CANCEL,
    summary: str | None = None,
) -> Out:
    return await workflow.execute_local_activity(
        ref.name,
        arg,
        result_type=ref.output,
        start_to_close_timeout=start_to_close_timeout,
        retry_policy=retry_policy,
        cancellation_type=cancellation_type,
        summary=summary,
    )
