"""Where a key sits in a TOML text: ``tomllib`` parses values but keeps no positions.

:func:`key_lines` scans the text once and maps every key path (``("tool", "name")``,
``("tools", 0, "source")``, ``("arguments", "properties", "path", "type")``) to the
1-based line that defines it; :func:`line_of` falls back to the nearest enclosing key,
so a value inside an inline table or a multi-line array still gets a useful line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

PathPart = str | int
KeyPath = tuple[PathPart, ...]

_BARE = re.compile(r"[A-Za-z0-9_-]+")
_ARRAY_HEADER = re.compile(r"^\s*\[\[(?P<key>.+?)\]\]\s*(#.*)?$")
_TABLE_HEADER = re.compile(r"^\s*\[(?P<key>[^\[].*?)\]\s*(#.*)?$")


def split_key(text: str) -> list[str] | None:
    """Split a dotted TOML key (bare or quoted parts); ``None`` if it is not a key."""
    parts: list[str] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in " \t":
            i += 1
        if i >= n:
            return None
        quote = text[i]
        if quote in "\"'":
            end = text.find(quote, i + 1)
            if end < 0:
                return None
            parts.append(text[i + 1 : end])
            i = end + 1
        else:
            match = _BARE.match(text, i)
            if not match:
                return None
            parts.append(match.group())
            i = match.end()
        while i < n and text[i] in " \t":
            i += 1
        if i >= n:
            return parts
        if text[i] != ".":
            return None
        i += 1


def _key_before_equals(line: str) -> list[str] | None:
    in_quote: str | None = None
    for index, char in enumerate(line):
        if in_quote:
            if char == in_quote:
                in_quote = None
        elif char in "\"'":
            in_quote = char
        elif char == "=":
            return split_key(line[:index])
        elif char == "#":
            return None
    return None


def key_lines(text: str) -> dict[KeyPath, int]:
    lines: dict[KeyPath, int] = {}
    arrays: dict[KeyPath, int] = {}
    current: KeyPath = ()
    multiline: str | None = None

    def resolve(parts: Sequence[str]) -> KeyPath:
        path: KeyPath = ()
        for part in parts:
            path = (*path, part)
            if path in arrays:
                path = (*path, arrays[path] - 1)
        return path

    for number, line in enumerate(text.splitlines(), start=1):
        if multiline:
            if line.count(multiline) % 2 == 1:
                multiline = None
            continue
        array = _ARRAY_HEADER.match(line)
        table = None if array else _TABLE_HEADER.match(line)
        if array or table:
            parts = split_key((array or table).group("key"))  # type: ignore[union-attr]
            if parts is None:
                continue
            if array:
                base = (*resolve(parts[:-1]), parts[-1])
                arrays[base] = arrays.get(base, 0) + 1
                lines.setdefault(base, number)
                current = (*base, arrays[base] - 1)
            else:
                current = resolve(parts)
            lines.setdefault(current, number)
            continue
        parts = _key_before_equals(line)
        if parts is None:
            continue
        path = current + tuple(parts)
        lines.setdefault(path, number)
        value = line.split("=", 1)[1]
        for marker in ('"""', "'''"):
            if value.count(marker) % 2 == 1:
                multiline = marker
    return lines


def line_of(lines: dict[KeyPath, int], path: Sequence[PathPart]) -> int | None:
    """The line of ``path``, or of its nearest enclosing key that the text defines."""
    probe = tuple(path)
    while probe:
        if probe in lines:
            return lines[probe]
        probe = probe[:-1]
    return None


def dotted(path: Sequence[PathPart]) -> str:
    """``("tools", 0, "source")`` -> ``tools[0].source``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "(root)"
