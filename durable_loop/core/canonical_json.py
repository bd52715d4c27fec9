"""Canonical JSON: one byte string per value, so hashes and fingerprints are stable."""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import NoReturn, TypeVar

from pydantic import JsonValue

T = TypeVar("T")
MAX_JSON_DEPTH = 100
"""Deepest nesting of tool arguments accepted (messages and requests nest them further,
and pydantic validates JSON values at most 255 levels deep)."""
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def scrub_surrogates(value: T) -> T:
    """Replace lone surrogates (invalid UTF-8 decoded with ``surrogateescape``, or a
    ``\\ud800`` escape in JSON text) with U+FFFD, in strings, keys and nested values.

    Such strings cannot be encoded as UTF-8, so neither the store nor Temporal's payload
    converter could write them.
    """
    if isinstance(value, str):
        return LONE_SURROGATE.sub("\ufffd", value) if LONE_SURROGATE.search(value) else value  # type: ignore[return-value]
    if isinstance(value, list):
        return [scrub_surrogates(item) for item in value]  # type: ignore[return-value]
    if isinstance(value, dict):
        return {scrub_surrogates(k): scrub_surrogates(v) for k, v in value.items()}  # type: ignore[return-value]
    return value


def _not_json(token: str) -> NoReturn:
    raise ValueError(f"{token} is not valid JSON")


def _finite(token: str) -> float:
    number = float(token)
    if not math.isfinite(number):
        _not_json(token)
    return number


def nesting_depth(value: object) -> int:
    """How deeply lists and objects nest in ``value`` (iterative: any depth is safe)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return deepest


def strict_loads(text: str) -> JsonValue:
    """``json.loads`` refusing NaN, Infinity, numbers too large for a float and nesting
    deeper than :data:`MAX_JSON_DEPTH`: a value that parses here re-encodes for any
    provider. Raises ValueError (or RecursionError for absurd nesting)."""
    value: JsonValue = json.loads(text, parse_constant=_not_json, parse_float=_finite)
    if nesting_depth(value) > MAX_JSON_DEPTH:
        raise ValueError(f"nested deeper than {MAX_JSON_DEPTH} levels")
    return value


def canonical_dumps(value: JsonValue) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8", errors="surrogatepass"))


def largest_string(raw_arguments: str) -> tuple[str, int] | None:
    """The JSON pointer and length (characters) of the longest string in the arguments,
    which is what a model must shorten after ARGUMENTS_TOO_LARGE; None if unreadable."""
    try:
        parsed = strict_loads(raw_arguments)
    except (ValueError, RecursionError):
        return None
    best: tuple[str, int] | None = None
    stack: list[tuple[str, object]] = [("", parsed)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, str):
            if best is None or len(node) > best[1]:
                best = (path or "/", len(node))
        elif isinstance(node, dict):
            stack.extend((f"{path}/{_escape(str(k))}", v) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((f"{path}/{i}", v) for i, v in enumerate(node))
    if best is None:
        return None
    return _printable(best[0]), best[1]


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _printable(path: str, limit: int = 120) -> str:
    """A pointer safe to put in history: lone surrogates (legal in JSON escapes, not in
    UTF-8) replaced, and bounded, since keys can be as long as the arguments."""
    safe = path.encode("utf-8", "replace").decode("utf-8")
    return safe if len(safe) <= limit else safe[: limit - 1] + "…"


def arguments_fingerprint(raw_arguments: str) -> tuple[bool, str]:
    """Return (is_valid_json_object, sha256 of canonical arguments).

    Valid JSON is canonicalised so that key order and whitespace do not make two equal
    calls look different; invalid JSON is hashed as emitted.
    """
    try:
        parsed = strict_loads(raw_arguments) if raw_arguments.strip() else {}
    except (ValueError, RecursionError):
        return False, sha256_hex(raw_arguments)
    if not isinstance(parsed, dict):
        return False, sha256_hex(raw_arguments)
    return True, sha256_hex(canonical_dumps(parsed))
