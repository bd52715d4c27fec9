"""Model-facing names for MCP tools: ``<prefix>_<tool>`` in snake_case, unique, provider-safe.

MCP servers name tools freely (``get-sum``, ``Shout Text``, ``files.read``). Each tool gets
``<prefix>_<tool>`` in snake_case (stable names that read alike across servers); the
shared mapping of :mod:`durable_loop.core.tool_names` then makes it provider-safe and
unique (a clash or an over-long name gets a short hash suffix). The spec keeps the
original name in ``original_name``, and the worker keeps the map back to the server.
"""

from __future__ import annotations

import re

from durable_loop.core.tool_names import provider_safe_name

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NOT_WORD = re.compile(r"[^a-z0-9]+")


def snake(text: str) -> str:
    words = _NOT_WORD.sub("_", _CAMEL.sub("_", text).lower()).strip("_")
    return re.sub(r"_+", "_", words)


def safe_tool_name(prefix: str, original: str, taken: set[str]) -> str:
    """A provider-safe snake_case name for ``original`` not in ``taken`` (which it joins)."""
    stem = "_".join(part for part in (snake(prefix), snake(original)) if part) or "tool"
    return provider_safe_name(stem, taken, key=prefix + "/" + original)
