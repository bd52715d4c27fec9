"""``--output-schema FILE`` of ``send`` and ``chat``: a JSON Schema file the answer must fit.

Checked here too, so a bad file is an ``INVALID_SETTING`` line before anything is sent
(the session's Update validator refuses it with the same code either way)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from durable_loop.cli.errors import CliError
from durable_loop.core.errors import ErrorCode

if TYPE_CHECKING:
    from durable_loop.core.contracts import RunResult
    from durable_loop.core.typed_output import OutputSchema

INVALID_ANSWER_CHARS = 500

OutputSchemaFile = Annotated[
    Path | None,
    typer.Option(
        "--output-schema",
        help="A JSON Schema file: the answer must be JSON valid against it (printed as "
        "'output'); invalid answers are sent back (recovery correct_typed_answer), then "
        "OUTPUT_INVALID.",
        show_default=False,
    ),
]


def load_output_schema(path: Path | None) -> OutputSchema | None:
    if path is None:
        return None
    from durable_loop.core.typed_output import schema_problem

    try:
        value = json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise CliError(ErrorCode.INVALID_SETTING, f"{path}: malformed JSON: {err}") from None
    if not isinstance(value, dict):
        raise CliError(ErrorCode.INVALID_SETTING, f"{path}: a JSON Schema must be an object")
    problem = schema_problem(value)
    if problem is not None:
        raise CliError(ErrorCode.INVALID_SETTING, f"{path}: {problem}")
    return value


def answer_of(result: RunResult) -> str | None:
    """What ``send`` prints on stdout as the answer: the reply, but nothing when the message
    ended ``OUTPUT_INVALID`` (its last reply failed the schema: it is not the answer, and
    :func:`invalid_answer_line` shows it on stderr)."""
    if _output_invalid(result):
        return None
    return result.reply


def invalid_answer_line(result: RunResult) -> str | None:
    """The summary line of a reply that failed the output schema, cut at
    ``INVALID_ANSWER_CHARS``; None for any other result."""
    if not _output_invalid(result) or result.reply is None:
        return None
    text = " ".join(result.reply.split())
    if len(text) > INVALID_ANSWER_CHARS:
        text = text[: INVALID_ANSWER_CHARS - 1] + "…"
    return f"  invalid answer (not valid against the output schema): {text}"


def _output_invalid(result: RunResult) -> bool:
    return result.error is not None and result.error.code == ErrorCode.OUTPUT_INVALID
