"""An output schema is a JSON Schema; this checks one before a message is admitted."""

from __future__ import annotations

from typing import TypeAlias

from jsonschema import SchemaError
from jsonschema.validators import validator_for
from pydantic import JsonValue

OutputSchema: TypeAlias = dict[str, JsonValue]


def schema_problem(schema: OutputSchema) -> str | None:
    """Why ``schema`` is not a valid JSON Schema (checked against its own ``$schema``
    dialect, Draft 2020-12 when it names none), or ``None`` when it is one."""
    try:
        validator_for(schema).check_schema(schema)
    except SchemaError as err:
        where = "/".join(str(p) for p in err.absolute_path)
        return f"output_schema is not a valid JSON Schema: {err.message}" + (
            f" (at /{where})" if where else ""
        )
    return None
