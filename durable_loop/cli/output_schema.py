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
    from durable_loop.core.typed_output import OutputSchema

OutputSchemaFile = Annotated[
    Path | None,
    typer.Option(
        "--output-schema",
        help="A JSON Schema file: the answer must be JSON valid against it (printed as "
        "'output'); invalid answers are sent back output_retries times, then OUTPUT_INVALID.",
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
