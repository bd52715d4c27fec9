"""Tool calls written as text: ``<tool_call>{...}</tool_call>`` tags, or bare / fenced JSON.

Some models (and servers without a tool-call parser for them) put the call in the
assistant text. These parsers recover ``(name, arguments)`` pairs and the text left over.
"""

from __future__ import annotations

import json
import re

from pydantic import BaseModel, JsonValue

from durable_loop.core.canonical_json import canonical_dumps

TAG = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|\Z)", re.DOTALL)
FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


class TextCall(BaseModel):
    name: str
    arguments: str


def _call_of(value: object, known: set[str] | None) -> TextCall | None:
    if not isinstance(value, dict):
        return None
    name = value.get("name")
    arguments = value.get("arguments", value.get("parameters", {}))
    if not isinstance(name, str) or not name or (known is not None and name not in known):
        return None
    if isinstance(arguments, str):
        text = arguments
    elif isinstance(arguments, dict):
        text = canonical_dumps(arguments)
    else:
        return None
    return TextCall(name=name, arguments=text)


def _objects(text: str) -> list[JsonValue] | None:
    """Every JSON value in ``text`` (one value, an array, or several in a row); None when
    anything but whitespace is left over."""
    decoder = json.JSONDecoder()
    values: list[JsonValue] = []
    index, text = 0, text.strip()
    while index < len(text):
        try:
            value, end = decoder.raw_decode(text, index)
        except (ValueError, RecursionError):
            return None
        values.extend(value if isinstance(value, list) else [value])
        index = end
        while index < len(text) and text[index] in " \t\r\n,;":
            index += 1
    return values


def parse_tagged_calls(content: str) -> tuple[list[TextCall], str]:
    """Calls in ``<tool_call>`` tags (an unclosed last tag counts: output was cut at the
    stop sequence) and the text outside them. A tag whose body is not a call stays text."""
    calls: list[TextCall] = []
    kept: list[str] = []
    last = 0
    for match in TAG.finditer(content):
        found = [_call_of(v, None) for v in (_objects(match.group(1)) or [])]
        if not found or any(c is None for c in found):
            continue
        calls.extend(c for c in found if c is not None)
        kept.append(content[last : match.start()])
        last = match.end()
    kept.append(content[last:])
    return calls, "".join(kept).strip()


def parse_json_calls(content: str, tool_names: list[str]) -> tuple[list[TextCall], str]:
    """Calls written as JSON objects with ``name`` (a tool that was sent) and
    ``arguments`` (or ``parameters``): the whole reply, or fenced blocks within it."""
    known = set(tool_names)
    if not known:
        return [], content
    fences = list(FENCE.finditer(content))
    spans = [(m.start(), m.end(), m.group(1)) for m in fences] or [(0, len(content), content)]
    calls: list[TextCall] = []
    kept: list[str] = []
    last = 0
    for start, end, body in spans:
        values = _objects(body)
        found = [_call_of(v, known) for v in values or []]
        if not found or any(c is None for c in found):
            continue
        calls.extend(c for c in found if c is not None)
        kept.append(content[last:start])
        last = end
    kept.append(content[last:])
    return calls, "".join(kept).strip()
