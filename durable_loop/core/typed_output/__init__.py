"""Typed final answers: a message's ``output_schema``, how a request asks for JSON that
fits it (provider-native or a final-answer tool), and how the loop judges the answer.

Pure: no clock, I/O or randomness, so the workflow can call every function here."""

from durable_loop.core.typed_output.answer import (
    DEFAULT_OUTPUT_RETRIES,
    OutputVerdict,
    judge_answer,
    retry_text,
)
from durable_loop.core.typed_output.request import (
    FINAL_ANSWER_TOOL,
    OutputMode,
    final_answer_from_call,
    output_mode,
    shape_for_output,
)
from durable_loop.core.typed_output.schema import OutputSchema, schema_problem

__all__ = [
    "DEFAULT_OUTPUT_RETRIES",
    "FINAL_ANSWER_TOOL",
    "OutputMode",
    "OutputSchema",
    "OutputVerdict",
    "final_answer_from_call",
    "judge_answer",
    "output_mode",
    "retry_text",
    "schema_problem",
    "shape_for_output",
]
