"""Arguments brought to the types their JSON Schema names, where JSON cannot tell them apart.

JSON Schema counts ``7.0`` as an ``integer`` (a number with no fraction), so a call that
passes validation can still hand a Python ``int`` parameter a ``float``. Each integral
float whose schema allows an integer and no other number becomes an ``int``; nothing else
changes (validation has already said whether the value fits). Local ``$ref``s (Pydantic's
``$defs``), ``anyOf``/``oneOf``/``allOf``, object properties and array items are followed.
Pure: used by the tool dispatcher and by the workflow when it checks a person's edit.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import JsonValue

Schema = Mapping[str, JsonValue]


def coerce_to_schema(schema: Schema, value: JsonValue) -> JsonValue:
    """``value`` with its integral floats turned into ints where ``schema`` wants integers."""
    return _coerce(schema, value, schema)


def _coerce(schema: Schema, value: JsonValue, root: Schema) -> JsonValue:
    schema = _resolved(schema, root)
    if isinstance(value, float):
        return int(value) if value.is_integer() and _wants_integer(schema, root) else value
    if isinstance(value, dict):
        properties = _merged(schema, root, "properties")
        return {
            key: _coerce(sub, item, root)
            if isinstance(sub := properties.get(key), Mapping)
            else item
            for key, item in value.items()
        }
    if isinstance(value, list):
        items = _resolved_items(schema, root)
        if items is None:
            return value
        return [_coerce(items, item, root) for item in value]
    return value


def _resolved(schema: Schema, root: Schema, depth: int = 0) -> Schema:
    ref = schema.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/") or depth > 32:
        return schema
    target: JsonValue = dict(root)
    for part in ref[2:].split("/"):
        if not isinstance(target, dict) or part not in target:
            return schema
        target = target[part]
    return _resolved(target, root, depth + 1) if isinstance(target, dict) else schema


def _branches(schema: Schema, root: Schema) -> list[Schema]:
    found: list[Schema] = [schema]
    for key in ("anyOf", "oneOf", "allOf"):
        options = schema.get(key)
        if isinstance(options, list):
            found += [_resolved(o, root) for o in options if isinstance(o, dict)]
    return found


def _types(schema: Schema) -> set[str]:
    declared = schema.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list):
        return {t for t in declared if isinstance(t, str)}
    return set()


def _wants_integer(schema: Schema, root: Schema) -> bool:
    types: set[str] = set()
    for branch in _branches(schema, root):
        types |= _types(branch)
    return "integer" in types and "number" not in types


def _merged(schema: Schema, root: Schema, key: str) -> dict[str, JsonValue]:
    merged: dict[str, JsonValue] = {}
    for branch in _branches(schema, root):
        found = branch.get(key)
        if isinstance(found, dict):
            merged |= found
    return merged


def _resolved_items(schema: Schema, root: Schema) -> Schema | None:
    for branch in _branches(schema, root):
        items = branch.get("items")
        if isinstance(items, dict):
            return _resolved(items, root)
    return None
