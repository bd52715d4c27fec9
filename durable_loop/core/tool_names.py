"""Tool names every provider accepts, and the one mapping for names that are not.

OpenAI-compatible APIs and Anthropic take ``^[a-zA-Z0-9_-]{1,64}$``; Gemini also wants the
first character to be a letter or ``_``. Their intersection is :data:`TOOL_NAME_PATTERN`.
Names from elsewhere (MCP servers, benchmark function lists: ``files.read``,
``musicCharts.getMostPlayed``, 80-character names) go through :func:`provider_safe_name`:
every other character becomes ``_``, a leading digit or ``-`` gets a ``t_`` prefix, and a
name that is too long or already taken gets a short hash of the original. The registered
spec keeps the original in ``ToolSpec.original_name``, so the tool catalog recorded in
history joins the two.
"""

from __future__ import annotations

import hashlib
import re

MAX_TOOL_NAME = 64
TOOL_NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_-]")


def check_tool_name(name: str) -> str:
    """Refuse a name some provider would refuse (a ValueError naming the rule)."""
    if not TOOL_NAME_PATTERN.fullmatch(name):
        raise ValueError(
            f"tool name {name!r} is not cross-provider safe: use letters, digits, '_' and "
            "'-', start with a letter or '_', at most 64 characters"
        )
    return name


def joined_name(name: str, original_name: str | None) -> str:
    """The model-facing name, and the tool's own name in parentheses when it is mapped:
    ``files_read (files.read)``."""
    if original_name is None or original_name == name:
        return name
    return f"{name} ({original_name})"


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:6]


def provider_safe_name(original: str, taken: set[str] | None = None, *, key: str = "") -> str:
    """A name matching :data:`TOOL_NAME_PATTERN` for ``original``, not in ``taken`` (which it
    joins). Deterministic: the same original and taken set give the same name. ``key``
    (default ``original``) seeds the hash suffix of an over-long or clashing name."""
    taken = taken if taken is not None else set()
    stem = _NOT_ALLOWED.sub("_", original) or "tool"
    if not (stem[0].isalpha() or stem[0] == "_"):
        stem = f"t_{stem}"
    name = stem
    if name in taken or len(stem) > MAX_TOOL_NAME:
        name = f"{stem[: MAX_TOOL_NAME - 7]}_{_short_hash(key or original)}"
    counter = 2
    while name in taken:
        suffix = f"_{counter}"
        name = f"{stem[: MAX_TOOL_NAME - len(suffix)]}{suffix}"
        counter += 1
    check_tool_name(name)
    taken.add(name)
    return name
