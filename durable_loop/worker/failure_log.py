"""One log line per coded activity failure instead of a traceback.

Temporal's worker logs every failed attempt as "Completing activity as failed" with the
traceback, at WARNING; only ``BENIGN`` application errors go to DEBUG. A coded failure (a
code of :class:`~durable_loop.core.errors.ErrorCode` or ``HTTP_<status>``: a 429, a 5xx,
a timeout, a refused key) is expected and says what happened, so this interceptor marks
it ``BENIGN`` and logs one line with the code, the attempt and what happens next. On the
last attempt the message gains how many attempts were made over how long, which is what
the workflow (and the person reading the RunResult) sees. Anything uncoded passes through
untouched and keeps its traceback.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from temporalio import activity
from temporalio.common import RetryPolicy
from temporalio.exceptions import ApplicationError, ApplicationErrorCategory
from temporalio.worker import ActivityInboundInterceptor, ExecuteActivityInput, Interceptor

from durable_loop.core.errors import HTTP_STATUS_PREFIX, ErrorCode
from durable_loop.core.retry import RetrySettings
from durable_loop.workflows.activity_calls import retry_policy


def is_coded(error_type: str | None) -> bool:
    return bool(error_type) and (
        ErrorCode.known(error_type) is not None or str(error_type).startswith(HTTP_STATUS_PREFIX)
    )


def next_delay(err: ApplicationError, policy: RetryPolicy | None, attempt: int) -> timedelta | None:
    """The wait before the next attempt, as Temporal computes it (None: not known)."""
    if err.next_retry_delay is not None:
        return err.next_retry_delay
    if policy is None:
        return None
    interval = policy.initial_interval * policy.backoff_coefficient ** (attempt - 1)
    ceiling = policy.maximum_interval or policy.initial_interval * 100
    return min(interval, ceiling)


def retried(err: ApplicationError, policy: RetryPolicy | None, attempt: int) -> bool:
    if err.non_retryable:
        return False
    if policy is None:
        return True
    if err.type in (policy.non_retryable_error_types or []):
        return False
    return policy.maximum_attempts == 0 or attempt < policy.maximum_attempts


def policy_of(info: activity.Info, args: Sequence[Any]) -> RetryPolicy | None:
    """The activity's retry policy: from the server when it says (the dev server does, the
    time-skipping test server does not), else from an LLM activity's endpoint settings."""
    if info.retry_policy is not None:
        return info.retry_policy
    retry = getattr(getattr(args[0], "endpoint", None), "retry", None) if args else None
    return retry_policy(retry) if isinstance(retry, RetrySettings) else None


class CodedFailureLog(Interceptor):
    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _Quiet(next)


class _Quiet(ActivityInboundInterceptor):
    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        started = time.monotonic()
        try:
            return await super().execute_activity(input)
        except ApplicationError as err:
            if not is_coded(err.type):
                raise
            raise _quiet(err, input.args, time.monotonic() - started) from None


def _quiet(err: ApplicationError, args: Sequence[Any], attempt_s: float) -> ApplicationError:
    info = activity.info()
    policy = policy_of(info, args)
    attempt = info.attempt
    message = err.message
    head = f"{info.activity_type} attempt {attempt} failed: {err.type}: {message}"
    if retried(err, policy, attempt):
        delay = next_delay(err, policy, attempt)
        wait = "per the retry policy" if delay is None else f"{delay.total_seconds():g}s"
        activity.logger.info("%s; retrying in %s", head, wait)
    else:
        if not err.non_retryable and attempt > 1:
            earlier = info.current_attempt_scheduled_time - info.scheduled_time
            total = earlier.total_seconds() + attempt_s
            message = f"{message} (gave up after {attempt} attempts over {total:.1f}s)"
        activity.logger.warning("%s; not retried", head)
    return ApplicationError(
        message,
        *err.details,
        type=err.type,
        non_retryable=err.non_retryable,
        next_retry_delay=err.next_retry_delay,
        category=ApplicationErrorCategory.BENIGN,
    )
