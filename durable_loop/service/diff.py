"""A proposed change set shown as a diff against the current facts."""

from __future__ import annotations

import difflib
from typing import Literal

import jsonpatch
import jsonpointer
from pydantic import BaseModel, JsonValue

from durable_loop.core.visible_text import visible_json

LineKind = Literal["context", "added", "removed", "hunk"]


class DiffLine(BaseModel):
    kind: LineKind
    text: str


class FactsDiff(BaseModel):
    before: JsonValue
    after: JsonValue | None = None
    lines: list[DiffLine]
    applies: bool = True
    problem: str | None = None


def _pretty(document: JsonValue) -> list[str]:
    """Lines of the document as a person reads them: hidden characters escaped (so a raw
    U+2028 inside a value cannot split a line either)."""
    return visible_json(document, indent=2, sort_keys=True).split("\n")


def facts_diff(facts: dict[str, JsonValue], changes: list[dict[str, JsonValue]]) -> FactsDiff:
    """Unified diff of the facts before and after ``changes`` (JSON Patch); when the patch
    no longer applies (the facts moved), say so: a confirmation would be a conflict."""
    try:
        after = jsonpatch.apply_patch(facts, changes, in_place=False)
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as err:
        unchanged = [DiffLine(kind="context", text=line) for line in _pretty(facts)]
        return FactsDiff(before=facts, lines=unchanged, applies=False, problem=str(err))
    return FactsDiff(before=facts, after=after, lines=json_diff(facts, after))


def json_diff(before: JsonValue, after: JsonValue) -> list[DiffLine]:
    """Unified diff of two JSON documents, pretty-printed with sorted keys."""
    lines: list[DiffLine] = []
    diff = difflib.unified_diff(_pretty(before), _pretty(after), lineterm="", n=3)
    for line in list(diff)[2:]:  # skip the ---/+++ file headers
        if line.startswith("@@"):
            lines.append(DiffLine(kind="hunk", text=line))
        elif line.startswith("+"):
            lines.append(DiffLine(kind="added", text=line[1:]))
        elif line.startswith("-"):
            lines.append(DiffLine(kind="removed", text=line[1:]))
        else:
            lines.append(DiffLine(kind="context", text=line[1:]))
    return lines
