"""The optional summarisation step: when a request's context window left messages out,
the next turn first runs ``summarize_context`` (its own activity), which stores a summary
of everything before the first kept message; later requests send it in their place.

Deterministic workflow code; a failed summary is not fatal (the window still applies).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Protocol

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from durable_loop.core.activity_contracts import LlmTurnOutput, SummarizeInput
    from durable_loop.core.activity_refs import SUMMARIZE_CONTEXT
    from durable_loop.core.config import RuntimeConfig
    from durable_loop.core.endpoint import LlmEndpoint
    from durable_loop.core.errors import ErrorCode
    from durable_loop.core.messages import Usage
from durable_loop.workflows.activity_calls import run_activity


class SummaryState(Protocol):
    summary_due: int | None
    """Kept on the session cursor: a turn of one message may make a summary due for the
    next message's first turn."""


class ContextSummaries:
    def __init__(self, session_id: str, config: RuntimeConfig, state: SummaryState) -> None:
        self.session_id = session_id
        self.enabled = config.history.summarize_dropped_context
        self.state = state
        self.failed_upto: int | None = None

    def note(self, out: LlmTurnOutput) -> None:
        """Remember that a turn left out messages no summary covers yet."""
        first_kept = out.context_first_kept_seq
        if not self.enabled or not out.context_dropped or first_kept is None:
            return
        if (out.summary_covers_upto or 0) < first_kept and self.failed_upto != first_kept:
            self.state.summary_due = first_kept

    async def run_if_due(self, endpoint: LlmEndpoint, take_seq: Callable[[], int]) -> Usage:
        """Summarise the prefix noted last; returns the tokens the summary cost."""
        covers = self.state.summary_due
        if covers is None or not self.enabled:
            return Usage()
        self.state.summary_due = None
        inp = SummarizeInput(
            session_id=self.session_id,
            endpoint=endpoint,
            covers_upto=covers,
            summary_seq=take_seq(),
        )
        try:
            out = await run_activity(
                SUMMARIZE_CONTEXT,
                inp,
                start_to_close_timeout=timedelta(seconds=endpoint.timeout_s + 15),
                retry_policy=RetryPolicy(
                    initial_interval=endpoint.retry.initial_interval(),
                    maximum_interval=endpoint.retry.maximum_interval(),
                    maximum_attempts=endpoint.retry.maximum_attempts,
                    non_retryable_error_types=[
                        ErrorCode.PROVIDER_AUTH,
                        ErrorCode.PROVIDER_BAD_REQUEST,
                    ],
                ),
                summary=f"summarize: seq < {covers}",
            )
        except ActivityError:
            self.failed_upto = covers
            return Usage()
        return out.usage
