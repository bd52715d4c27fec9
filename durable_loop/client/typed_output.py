"""The output schema a client sends with a message: a JSON Schema as given, or the
schema of an application type (``output_type=Invoice`` sends
``Invoice.model_json_schema()``); read the answer back with ``RunResult.output_as``."""

from __future__ import annotations

from typing import Any

from durable_loop.core.errors import ConfigError, ErrorCode
from durable_loop.core.typed_output import OutputSchema
from durable_loop.core.typed_output.parse import schema_of


def message_schema(
    output_schema: OutputSchema | None, output_type: type[Any] | None
) -> OutputSchema | None:
    """The schema to send: ``output_schema``, or ``output_type``'s; not both."""
    if output_schema is not None and output_type is not None:
        raise ConfigError(
            "pass output_schema or output_type, not both", code=ErrorCode.INVALID_SETTING
        )
    return schema_of(output_type) if output_type is not None else output_schema
