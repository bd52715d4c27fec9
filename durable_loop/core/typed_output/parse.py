"""Reading a typed answer back as the application's type (a Pydantic model, a dataclass,
``list[int]``...): the schema a type stands for, and the value parsed into it."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import JsonValue, TypeAdapter, ValidationError

from durable_loop.core.errors import CodedError, DurableLoopError, ErrorCode
from durable_loop.core.typed_output.schema import OutputSchema

T = TypeVar("T")


class OutputUnavailable(DurableLoopError):
    """A run result has no typed answer to read: the message failed or was cancelled, or
    its output does not parse into the type asked for."""

    show_code = True


def schema_of(output_type: type[Any]) -> OutputSchema:
    """The JSON Schema a type stands for (``model_json_schema()`` for a Pydantic model)."""
    schema: OutputSchema = TypeAdapter(output_type).json_schema()
    return schema


def parse_output(
    output: JsonValue, output_type: type[T], *, status: str, error: CodedError | None
) -> T:
    """``output`` as an instance of ``output_type``; :class:`OutputUnavailable` with the
    run's own error code when it ended without a typed answer."""
    if error is not None:
        raise OutputUnavailable(
            ErrorCode(ErrorCode.known(error.code) or ErrorCode.ERROR), str(error)
        )
    if status != "completed":
        raise OutputUnavailable(
            ErrorCode.OUTPUT_INVALID, f"the message is {status}, with no output"
        )
    try:
        return TypeAdapter(output_type).validate_python(output)
    except ValidationError as err:
        raise OutputUnavailable(
            ErrorCode.OUTPUT_INVALID, f"the output does not parse as {output_type.__name__}: {err}"
        ) from None
