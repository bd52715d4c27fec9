"""Typed answers: the final answer must be JSON valid against the message's output schema
(``RunResult.output``); the ``invalid_json_first`` behaviour answers in prose first."""

from __future__ import annotations

from pydantic import JsonValue

from durable_loop.evals.scenario import Action, ModelView, Scenario, Trace

CITY_SCHEMA: dict[str, JsonValue] = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
    "required": ["city", "population"],
    "additionalProperties": False,
}
ANSWER: dict[str, JsonValue] = {"city": "Oslo", "population": 709000}


def _check_typed(trace: Trace) -> list[str]:
    if trace.status != "completed":
        return [f"status {trace.status} ({trace.error_code})"]
    if trace.output != ANSWER:
        return [f"output {str(trace.output)[:60]!r} is not {ANSWER!r}"]
    return []


def _answer(view: ModelView) -> Action:
    return Action.final('{"city": "Oslo", "population": 709000}')


TYPED_ANSWER = Scenario(
    name="typed_answer",
    prompt="What is the capital of Norway and its population (709000)? Answer as JSON with "
    "the keys city and population.",
    policy=_answer,
    check=_check_typed,
    uses_tools=False,
    output_schema=CITY_SCHEMA,
    description="the final answer is JSON valid against an output schema (RunResult.output)",
)

TYPED = (TYPED_ANSWER,)
