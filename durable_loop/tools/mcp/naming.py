"""Model-facing names for MCP tools: snake_case, unique, at most 64 characters.

MCP servers name tools freely (``get-sum``, ``Shout Text``, ``files.read``). Providers do
not: the common ground is ``^[a-z][a-z0-9_]{0,63}$``. Each tool gets ``<prefix>_<tool>``
in snake_case; a clash or an over-long name gets a short hash suffix. The mapping back to
the original name stays with the worker.
"""

from __future__ import annotations

import hashlib
import re

from durable_loop.core.tools import TOOL_NAME_PATTERN

MAX_NAME = 64
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NOT_WORD = re.compile(r"[^a-z0-9]+")


def snake(text: str) -> str:
    words = _NOT_WORD.sub("_", _CAMEL.sub("_", text).lower()).strip("_")
    return re.sub(r"_+", "_", words)


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:6]


def safe_tool_name(prefix: str, original: str, taken: set[str]) -> str:
    """A cross-provider safe name for ``original`` not in ``taken`` (which it joins)."""
    stem = "_".join(part for part in (snake(prefix), snake(original)) if part) or "tool"
    if not stem[0].isalpha():
        stem = f"t_{stem}"
    name = stem[:MAX_NAME]
    if name in taken or len(stem) > MAX_NAME:
        name = f"{stem[: MAX_NAME - 7]}_{_short_hash(prefix + '/' + original)}"
    counter = 2
    while name in taken:
        suffix = f"_{counter}"
        name = f"{stem[: MAX_NAME - len(suffix)]}{suffix}"
        counter += 1
    assert TOOL_NAME_PATTERN.fullmatch(name), name
    taken.add(name)
    return name
