"""Tool calls written as text: ``<tool_call>{...}</tool_call>`` tags, or bare / fenced JSON.

Some models (and servers without a tool-call parser for them) put the call in the
assistant text. These parsers recover ``(name, arguments)`` pairs and the text left over.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

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


def _objects_or_doubled(text: str) -> list[JsonValue] | None:
    """:func:`_objects`, or those of ``{{...}}`` with one layer of braces taken off: the
    Qwen2.5-Coder template shows its call example as ``{{"name": ..., "arguments": ...}}``
    and the model copies the doubled braces."""
    values = _objects(text)
    stripped = text.strip()
    if values is None and stripped.startswith("{{") and stripped.endswith("}}"):
        return _objects(stripped[1:-1])
    return values


def parse_tagged_calls(content: str) -> tuple[list[TextCall], str]:
    """Calls in ``<tool_call>`` tags (an unclosed last tag counts: output was cut at the
    stop sequence) and the text outside them. A tag whose body is not a call stays text."""
    calls: list[TextCall] = []
    kept: list[str] = []
    last = 0
    for match in TAG.finditer(content):
        found = [_call_of(v, None) for v in (_objects_or_doubled(match.group(1)) or [])]
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
        values = _objects_or_doubled(body)
        found = [_call_of(v, known) for v in values or []]
        if not found or any(c is None for c in found):
            continue
        calls.extend(c for c in found if c is not None)
        kept.append(content[last:start])
        last = end
    kept.append(content[last:])
    return calls, "".join(kept).strip()


CALL_SHAPES = (frozenset({"name", "arguments"}), frozenset({"name", "parameters"}))
IDENTIFIER = re.compile(r"^[A-Za-z_][\w.-]{0,127}$")


def parse_call_shaped(content: str) -> TextCall | None:
    """A reply that is nothing but one object in a call's exact shape, ``{"name":
    <identifier>, "arguments": {...}}`` (or ``parameters``), bare, fenced, in one
    ``<tool_call>`` tag or in doubled braces, whatever the name: a model calling a tool
    nobody offered. An object with any other key, or arguments that are no object, is not
    call-shaped."""
    text = content.strip().rstrip(".;,")
    wrapped = FENCE.fullmatch(text) or TAG.fullmatch(text)
    values = _objects_or_doubled(wrapped.group(1) if wrapped else text)
    if values is None or len(values) != 1 or not isinstance(values[0], dict):
        return None
    value = values[0]
    name = value.get("name")
    arguments = value.get("arguments", value.get("parameters"))
    if frozenset(value) not in CALL_SHAPES or not isinstance(arguments, dict):
        return None
    if not isinstance(name, str) or not IDENTIFIER.match(name):
        return None
    return TextCall(name=name, arguments=canonical_dumps(arguments))


@dataclass(frozen=True)
class TextCallFallback:
    transform: str
    preset: str
    shape: str
    parse: Callable[[str, list[str]], tuple[list[TextCall], str]]


TEXT_CALL_FALLBACKS = (
    TextCallFallback(
        transform="assistant_content_tool_call_tags_to_tool_calls",
        preset="content_tag_tool_call_fallback",
        shape="<tool_call> tags",
        parse=lambda content, tool_names: parse_tagged_calls(content),
    ),
    TextCallFallback(
        transform="assistant_content_json_tool_calls_to_tool_calls",
        preset="json_tool_call_fallback",
        shape="JSON naming an offered tool",
        parse=parse_json_calls,
    ),
)
"""The response transforms that turn calls written as text into tool calls."""


def text_call_warning(
    content: str | None, tool_names: list[str], response_transforms: list[str]
) -> str | None:
    """A warning for a reply that wrote a tool call as text which no configured transform
    turned into a call, so it was not executed. Only replies to requests that offered
    tools count: without tools no call could have been made anyway."""
    if not content or not tool_names:
        return None
    for fallback in TEXT_CALL_FALLBACKS:
        if fallback.transform in response_transforms:
            continue
        calls, _ = fallback.parse(content, tool_names)
        if calls:
            return (
                f"the reply wrote a call of {calls[0].name!r} as text ({fallback.shape}); it "
                f"was not executed. The response transform {fallback.transform} (preset "
                f"{fallback.preset}) turns this shape into tool calls"
            )
    return None
