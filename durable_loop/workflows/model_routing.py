"""Which model answers a turn, and what a session may spend.

* The fallback chain: a turn runs on the session's model; if that LLM activity fails
  for good (a non-retryable provider error, or its retries are exhausted), the same turn
  (same transcript reference, same assistant seq) runs on the next model of
  ``fallback_llms``. Each switch is a :class:`FallbackRecord` in the RunResult, and the
  reply's stored meta names the models that failed before it.
* The circuit breaker (``core.circuit``, session state): a model that keeps failing with
  a retryable error is skipped (a ``skipped`` FallbackRecord, CIRCUIT_OPEN) until its
  cool-down ends, then probed with one attempt.
* The session budget: ``max_session_tokens`` is checked before every LLM turn, and the
  tool calls of the turn that crossed it are not run (:func:`over_budget_plan`).
* Model switching: the ``switch_model`` Update validates and applies a new chain from
  the next message on.

Deterministic workflow code.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from temporalio import workflow
from temporalio.exceptions import ActivityError, CancelledError

with workflow.unsafe.imports_passed_through():
    from durable_loop.core.activity_contracts import LlmTurnInput, LlmTurnOutput
    from durable_loop.core.budget import BUDGET_COMMAND
    from durable_loop.core.catalog import refuse_unreliable_enforced
    from durable_loop.core.circuit import CircuitBreaker, skipped_error
    from durable_loop.core.config import RuntimeConfig, SessionSettings
    from durable_loop.core.contracts import (
        FallbackRecord,
        RunResult,
        SwitchModelRequest,
        SwitchModelResult,
    )
    from durable_loop.core.endpoint import LlmEndpoint
    from durable_loop.core.errors import CodedError, ConfigError, ErrorCode
    from durable_loop.core.guards import TurnPlan
    from durable_loop.core.messages import Usage
    from durable_loop.core.providers import get_adapter
    from durable_loop.core.retry import RetrySettings

from durable_loop.workflows.refusals import refuse

RunLlm = Callable[[LlmTurnInput], Awaitable[LlmTurnOutput]]
Describe = Callable[[ActivityError], CodedError]

BREAKER_PATCH = "fallback-circuit-breaker"
BUDGET_TOOLS_PATCH = "budget-crossing-turn-runs-no-tools"
PROBE_RETRY = RetrySettings(maximum_attempts=1)


def budget_error(config: RuntimeConfig, used: Usage) -> CodedError | None:
    """BUDGET_EXCEEDED once the session's input + output tokens reach the budget."""
    limit = config.max_session_tokens
    if limit is None or used.total_tokens < limit:
        return None
    return CodedError(
        code=ErrorCode.BUDGET_EXCEEDED,
        message=f"the session has used {used.total_tokens} tokens of its "
        f"max_session_tokens={limit}; raise it with the set_budget Update "
        f"(`{BUDGET_COMMAND}`, or POST /v1/sessions/SESSION/budget) or start a new session",
    )


def over_budget_plan(plan: TurnPlan, config: RuntimeConfig, used: Usage) -> TurnPlan:
    """The rule for the turn that crosses the budget while asking for tools: none of its
    calls runs, since no LLM turn would read the results. Each call is paired with a
    BUDGET_EXCEEDED result (calls refused for their own reason keep it), and the message
    ends with BUDGET_EXCEEDED before the next LLM turn."""
    error = budget_error(config, used)
    if error is None or not workflow.patched(BUDGET_TOOLS_PATCH):
        return plan
    refused = [
        d
        if d.action == "reject"
        else d.model_copy(update={"action": "reject", "error": error, "reuse_seq": None})
        for d in plan.decisions
    ]
    return plan.model_copy(
        update={"decisions": refused, "repeated": False, "unasked": None, "unasked_by": None}
    )


class ModelRouter:
    def __init__(self, settings: SessionSettings, breaker: CircuitBreaker) -> None:
        self.chain: list[LlmEndpoint] = [settings.llm, *settings.fallback_llms]
        self.breaker = breaker

    async def run_turn(
        self, inp: LlmTurnInput, run: RunLlm, describe: Describe, result: RunResult
    ) -> LlmTurnOutput:
        """Run ``inp`` on each model of the chain until one answers; re-raise the last
        failure when none does (cancellation is never retried elsewhere). With the breaker
        on, an open model is skipped (never the last of the chain) and a model past its
        cool-down gets one attempt. The last model always gets its whole retry policy."""
        failed: list[str] = []
        skipped: list[str] = []
        reason: str | None = None
        for position, endpoint in enumerate(self.chain):
            last = position + 1 == len(self.chain)
            guarded = self.breaker.settings.enabled and not last
            verdict = self.breaker.verdict(endpoint, workflow.now()) if guarded else "closed"
            if verdict != "closed" and not workflow.patched(BREAKER_PATCH):
                verdict = "closed"  # a run from before the breaker: no skip, no probe
            if verdict == "open":
                until = self.breaker.open_until(endpoint)
                self._fell_back(result, inp, position, skipped_error(endpoint, until), True)
                failed = [*failed, endpoint.model]
                skipped = [*skipped, endpoint.model]
                reason = ErrorCode.CIRCUIT_OPEN
                continue
            probe = verdict == "probe"
            tried = endpoint.model_copy(update={"retry": PROBE_RETRY}) if probe else endpoint
            attempt = inp.model_copy(
                update={
                    "endpoint": tried,
                    "fallback_from": failed,
                    "circuit_open": skipped,
                    "fallback_reason": reason,
                }
            )
            try:
                out = await run(attempt)
            except ActivityError as err:
                if isinstance(err.cause, CancelledError):
                    raise
                error = describe(err)
                if guarded:
                    self.breaker.failed(endpoint, error, workflow.now())
                if last:
                    raise
                self._fell_back(result, inp, position, error, False)
                failed, reason = [*failed, endpoint.model], error.code
                continue
            if guarded:
                self.breaker.succeeded(endpoint)
            result.model = out.model
            return out
        raise AssertionError("the model chain is never empty")

    def _fell_back(
        self, result: RunResult, inp: LlmTurnInput, position: int, error: CodedError, skipped: bool
    ) -> None:
        endpoint = self.chain[position]
        result.fallbacks.append(
            FallbackRecord(
                turn=inp.turn,
                failed_provider=endpoint.provider,
                failed_model=endpoint.model,
                error=error,
                next_model=self.chain[position + 1].model,
                skipped=skipped,
            )
        )


def validate_switch(settings: SessionSettings, request: SwitchModelRequest) -> None:
    """Refuse a switch the session could not run: unknown provider, or enforced tool use
    on a model marked unreliable (a :func:`refuse` with the configuration's code)."""
    new = switched_settings(settings, request)
    try:
        for endpoint in [new.llm, *new.fallback_llms]:
            get_adapter(endpoint.provider)
        refuse_unreliable_enforced(new)
    except ConfigError as err:
        raise refuse(err.code, err.message) from None


def switched_settings(settings: SessionSettings, request: SwitchModelRequest) -> SessionSettings:
    fallbacks = settings.fallback_llms if request.fallback_llms is None else request.fallback_llms
    return settings.model_copy(update={"llm": request.llm, "fallback_llms": list(fallbacks)})


def switch_result(before: SessionSettings, after: SessionSettings) -> SwitchModelResult:
    return SwitchModelResult(
        previous_model=before.llm.model,
        model=after.llm.model,
        fallback_models=[e.model for e in after.fallback_llms],
    )
