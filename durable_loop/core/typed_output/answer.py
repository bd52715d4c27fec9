"""Judging a final answer against the message's output schema, and the retry prompt
that sends the validation errors back to the model."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from jsonschema.validators import validator_for
from pydantic import JsonValue

from durable_loop.core.canonical_json import strict_loads
from durable_loop.core.typed_output.schema import OutputSchema

DEFAULT_OUTPUT_RETRIES = 2
MAX_REPORTED_ERRORS = 8
CODE_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*\s*\n(?P<body>.*?)\n?\s*```\s*$", re.DOTALL)
RETRY_TEXT = (
    "Your final answer must be a single JSON value valid against the output schema, and "
    "it was not:\n{errors}\nAnswer again with the corrected JSON only."
)


@dataclass(frozen=True)
class OutputVerdict:
    """A valid answer's parsed ``value``, or the ``errors`` that make it invalid."""

    value: JsonValue = None
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors


def _unfenced(text: str) -> str:
    """Models often wrap JSON in a Markdown code fence even when asked not to."""
    match = CODE_FENCE.match(text)
    return match.group("body") if match else text


def judge_answer(text: str | None, schema: OutputSchema, *, truncated: bool) -> OutputVerdict:
    """Parse ``text`` as JSON and validate it against ``schema``."""
    if truncated:
        return OutputVerdict(
            errors=["the answer is longer than reply_inline_bytes, so it cannot be checked"]
        )
    if not (text or "").strip():
        return OutputVerdict(errors=["the answer is empty, not JSON"])
    try:
        value = strict_loads(_unfenced(text or "").strip())
    except (ValueError, RecursionError) as err:
        return OutputVerdict(errors=[f"the answer is not valid JSON: {err}"])
    try:
        validator = validator_for(schema)(schema)
        found = sorted(validator.iter_errors(value), key=lambda e: list(map(str, e.absolute_path)))
    except Exception as err:
        # A schema that passed check_schema can still fail while validating (an
        # unresolvable $ref, a schema that skipped admission such as a child session's):
        # raised in workflow code it would fail the workflow task again on every retry.
        return OutputVerdict(errors=[f"the output schema cannot be applied: {err}"])
    if not found:
        return OutputVerdict(value=value)
    errors = []
    for error in found[:MAX_REPORTED_ERRORS]:
        where = "/".join(str(p) for p in error.absolute_path)
        errors.append(f"at /{where}: {error.message}")
    if len(found) > MAX_REPORTED_ERRORS:
        errors.append(f"... and {len(found) - MAX_REPORTED_ERRORS} more")
    return OutputVerdict(errors=errors)


def retry_text(errors: list[str]) -> str:
    """The synthetic user message that sends an invalid answer back to the model."""
    return RETRY_TEXT.format(errors="\n".join(f"- {e}" for e in errors))
