"""Calling an activity from workflow code through its typed reference (the argument must be
the reference's input model and the result comes back as its output model), its retry
policy, and reading its failure as a coded error."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, TimeoutError
from temporalio.workflow import ActivityCancellationType

with workflow.unsafe.imports_passed_through():
    from durable_loop.core.activity_refs import ActivityRef, In, Out
    from durable_loop.core.errors import CodedError, ErrorCode
    from durable_loop.core.retry import RetrySettings


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


LLM_NON_RETRYABLE: list[str] = [
    ErrorCode.PROVIDER_AUTH,
    ErrorCode.PROVIDER_BAD_REQUEST,
    ErrorCode.PROVIDER_BAD_RESPONSE,
]


def retry_policy(settings: RetrySettings, non_retryable: list[str] | None = None) -> RetryPolicy:
    return RetryPolicy(
        initial_interval=settings.initial_interval(),
        backoff_coefficient=settings.backoff_coefficient,
        maximum_interval=settings.maximum_interval(),
        maximum_attempts=settings.maximum_attempts,
        non_retryable_error_types=non_retryable or [],
    )


def failure_of(err: ActivityError) -> CodedError:
    """Turn an activity failure into a coded error, keeping the provider's message."""
    cause = err.cause
    if isinstance(cause, ApplicationError):
        return CodedError(code=cause.type or ErrorCode.PROVIDER_ERROR, message=cause.message)
    if isinstance(cause, TimeoutError):
        return CodedError(code=ErrorCode.PROVIDER_UNAVAILABLE, message="timed out")
    return CodedError(code=ErrorCode.PROVIDER_ERROR, message=str(cause or err))
