"""What the inspectors must agree on, read from the RunResults, and ways to find it in what
an inspector printed (a trace's JSON, whatever its exact shape; a table's text)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence

from pydantic import JsonValue

from durable_loop.core.contracts import RunResult
from tests.whole.session import Decided

VERDICT_STEMS = {
    "confirmed": ("confirm", "approv"),
    "committed": ("confirm", "approv", "commit"),
    "rejected": ("reject",),
    "expired": ("expir",),
}
"""How the word a decision is shown with begins (the verb a person types, or the status:
``approve``, ``approved_with_edits``, ``confirmed``, ...)."""


def statuses(results: Sequence[RunResult]) -> Counter[str]:
    return Counter(r.status for r in results)


def total_tokens(results: Sequence[RunResult]) -> int:
    return sum(r.usage.total_tokens for r in results)


def outcomes(results: Sequence[RunResult]) -> dict[str, tuple[str, bool, list[str], bool]]:
    """call id -> (tool, ok, error codes, executed) of every call of the messages."""
    return {
        t.call_id: (t.name, t.ok, sorted(t.error_codes), t.executed)
        for r in results
        for t in r.tool_calls
    }


def dicts(node: JsonValue) -> Iterator[dict[str, JsonValue]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from dicts(value)
    elif isinstance(node, list):
        for value in node:
            yield from dicts(value)


def words(node: JsonValue) -> set[str]:
    """Every scalar under ``node``, as lower-case text."""
    if isinstance(node, dict):
        return {w for value in node.values() for w in words(value)}
    if isinstance(node, list):
        return {w for value in node for w in words(value)}
    if node is None:
        return set()
    return {str(node).lower()}


def shows_decision(tree: JsonValue, decided: Decided, others: set[str]) -> bool:
    """Somewhere in ``tree`` one object names this decision alone: its target (call or
    proposal id), who decided, a word for the verdict, any edited fields, and no other
    decided call or proposal."""
    wanted = {decided.target.lower(), decided.who.lower(), *decided.edited_fields}
    stems = VERDICT_STEMS[decided.status]
    unwanted = {o.lower() for o in others} - {decided.target.lower()}
    for node in dicts(tree):
        seen = words(node)
        verdict = any(w.startswith(stems) for w in seen)
        if wanted <= seen and verdict and not unwanted & seen:
            return True
    return False


def shows_values(tree: JsonValue, *values: object) -> bool:
    """One object of ``tree`` holds every one of ``values`` (as scalars)."""
    wanted = {str(v).lower() for v in values}
    return any(wanted <= words(node) for node in dicts(tree))


def squashed(text: str) -> str:
    """Text without whitespace and table rules, so a value a table wrapped still matches."""
    return re.sub(r"[\s│┃║|]+", "", text)


def counted(text: str, count: int, word: str) -> bool:
    return re.search(rf"\b{count} {word}\b", text) is not None


def lines_naming(text: str, call_id: str) -> list[str]:
    """The lines of a printed table (the rows of an HTML page) that name ``call_id``."""
    rows = text.split("<tr") if "<tr" in text else text.splitlines()
    return [row for row in rows if re.search(rf"\b{re.escape(call_id)}\b", row)]
