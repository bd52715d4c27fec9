"""``correct_typed_answer``: a final answer that does not fit the message's output schema
is sent back with the validation errors (carried out by workflows/typed_answers)."""

from __future__ import annotations

from pydantic import Field

from durable_loop.core.recoveries.base import Legacy, Recovery, RecoverySettings
from durable_loop.core.typed_output.answer import DEFAULT_OUTPUT_RETRIES

NAME = "correct_typed_answer"


class CorrectTypedAnswer(RecoverySettings):
    attempts: int = Field(default=DEFAULT_OUTPUT_RETRIES, ge=1)


RECOVERY = Recovery(
    name=NAME,
    settings=CorrectTypedAnswer,
    stage="typed",
    fixes="a typed answer that is not valid JSON for its output_schema: sent back with the "
    "validation errors up to attempts times, then OUTPUT_INVALID",
    effect="scripted behaviour invalid_json_first: fails without it, passes with it "
    "(on by default)",
    patch_id="typed-output",
    reported=False,
    on_by_default=True,
    legacy=Legacy(switch="output_retries", counts=True, omit_default=True),
)


def attempts(settings: RecoverySettings | None) -> int:
    """Corrections a typed answer gets: none when the recovery is off."""
    return settings.attempts if isinstance(settings, CorrectTypedAnswer) else 0
