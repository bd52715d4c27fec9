"""Typed final answers inside the session workflow: admitting a message's output schema,
and judging the final answer of its loop (the pure rules are ``core.typed_output``).

A message with an ``output_schema`` changes what the loop schedules (a correction turn
after an invalid answer), so the schema is admitted behind the ``typed-output`` patch,
asked in the Update or Signal handler that queues the message (a fixed point of the
history; never asked for messages without a schema, whose histories stay as they were).
A queued message keeps its schema only when the patch said yes, including across
continue-as-new. Deterministic workflow code.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from durable_loop.core.activity_contracts import LlmTurnOutput
    from durable_loop.core.config import LoopStrategy, SessionSettings
    from durable_loop.core.contracts import ParkedMessage, RunResult, UserMessage
    from durable_loop.core.errors import CodedError, ErrorCode
    from durable_loop.core.recoveries import correct_typed_answer
    from durable_loop.core.typed_output import OutputSchema, judge_answer, retry_text
    from durable_loop.core.typed_output import schema_problem as _schema_problem

PATCH_ID = "typed-output"


def output_schema_refusal(message: UserMessage, settings: SessionSettings) -> str | None:
    """Why the session refuses the message's output schema (INVALID_SETTING), if it does."""
    if message.output_schema is None:
        return None
    if settings.runtime.loop_strategy is LoopStrategy.ROUTER:
        return "output_schema is not supported with loop_strategy=router"
    return _schema_problem(message.output_schema)


def admitted_schema(message: UserMessage) -> OutputSchema | None:
    """The schema the queued message keeps: only under the patch."""
    if message.output_schema is None or not workflow.patched(PATCH_ID):
        return None
    return message.output_schema


class TypedAnswer:
    """The output schema of the running message and the corrections it has used."""

    def __init__(self, schema: OutputSchema, retries: int, used: int = 0) -> None:
        self.schema = schema
        self.retries = retries
        self.used = used

    @classmethod
    def for_message(
        cls, schema: OutputSchema | None, settings: SessionSettings
    ) -> TypedAnswer | None:
        if schema is None:
            return None
        retries = correct_typed_answer.attempts(
            settings.runtime.recovery(correct_typed_answer.NAME)
        )
        return cls(schema, retries)

    @classmethod
    def resumed(cls, parked: ParkedMessage, settings: SessionSettings) -> TypedAnswer | None:
        typed = cls.for_message(parked.output_schema, settings)
        if typed is not None:
            typed.used = parked.output_retries_used or 0
        return typed

    def judge(self, out: LlmTurnOutput, result: RunResult) -> str | None:
        """Accept the answer into ``result.output``, or return the correction to send back;
        with no correction left, mark ``result`` failed with OUTPUT_INVALID."""
        verdict = judge_answer(out.text, self.schema, truncated=out.text_truncated)
        if verdict.ok:
            result.output = verdict.value
            result.output_corrections = self.used
            return None
        if self.used < self.retries:
            self.used += 1
            return retry_text(verdict.errors)
        result.output_corrections = self.used
        result.status = "failed"
        result.error = CodedError(
            code=ErrorCode.OUTPUT_INVALID,
            message=f"the final answer does not fit the output schema after {self.used} "
            f"correction(s): {'; '.join(verdict.errors)}",
        )
        return None


def schema_refused_result(message_id: str, problem: str) -> RunResult:
    """A Signal cannot be refused: a message whose schema is refused ends failed, unqueued."""
    return RunResult(
        message_id=message_id,
        status="failed",
        error=CodedError(code=ErrorCode.INVALID_SETTING, message=problem),
    )
