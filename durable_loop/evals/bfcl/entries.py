"""BFCL categories and seeded samples of their entries (questions, functions, answers)."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any

from durable_loop.cli.codes import CliCode
from durable_loop.cli.errors import CliError
from durable_loop.evals.bfcl.package import Bfcl

NON_LIVE = ("simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance")
LIVE = (
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
    "live_irrelevance",
    "live_relevance",
)
SINGLE_TURN = NON_LIVE + LIVE
MULTI_TURN = ("multi_turn_base",)
CATEGORIES = SINGLE_TURN + MULTI_TURN
GROUPS: dict[str, tuple[str, ...]] = {
    "non_live": NON_LIVE,
    "live": LIVE,
    "multi_turn": MULTI_TURN,
    "all": CATEGORIES,
}


def categories(spec: str) -> list[str]:
    """Category names and group names (non_live, live, all), comma-separated."""
    chosen: list[str] = []
    for name in [part.strip() for part in spec.split(",") if part.strip()] or ["all"]:
        if name in GROUPS:
            chosen += GROUPS[name]
        elif name in CATEGORIES:
            chosen.append(name)
        else:
            raise CliError(
                CliCode.UNKNOWN_SCENARIO,
                f"unknown BFCL category {name!r}; categories: {', '.join(CATEGORIES)} "
                f"(groups: {', '.join(GROUPS)})",
            )
    return list(dict.fromkeys(chosen))


def no_call_expected(category: str) -> bool:
    return "irrelevance" in category


def is_multi_turn(category: str) -> bool:
    return category in MULTI_TURN


@dataclass(frozen=True)
class BfclEntry:
    id: str
    category: str
    functions: list[dict[str, Any]]
    """BFCL's function documents, as its checker reads them."""
    messages: list[dict[str, Any]]
    """The first turn of the question: a system message or not, then the user's."""
    answer: Any
    """BFCL's possible answers (AST categories: ``[{name: {argument: [options]}}]``;
    multi-turn: the call lines of each turn); None for (ir)relevance."""
    raw: dict[str, Any]
    """The entry as BFCL loads it (the multi-turn checker and executor read it)."""

    @property
    def turns(self) -> list[str]:
        """The user's text of each turn."""
        return [
            "\n\n".join(str(m["content"]) for m in turn if m.get("role") != "system")
            for turn in self.raw["question"]
        ]

    @property
    def system_prompt(self) -> str | None:
        texts = [str(m["content"]) for m in self.messages if m.get("role") == "system"]
        return "\n\n".join(texts) if texts else None

    @property
    def user_text(self) -> str:
        return "\n\n".join(str(m["content"]) for m in self.messages if m.get("role") != "system")


def entries(bfcl: Bfcl, category: str) -> list[BfclEntry]:
    answers: dict[str, list[dict[str, Any]]] = {}
    if not no_call_expected(category) and category != "live_relevance":
        answers = {a["id"]: a["ground_truth"] for a in bfcl.load_answers(category)}
    return [
        BfclEntry(
            id=raw["id"],
            category=category,
            functions=raw["function"],
            messages=raw["question"][0],
            answer=answers.get(raw["id"]),
            raw=raw,
        )
        for raw in bfcl.load_entries(category)
    ]


def category_of(entry_id: str) -> str:
    """The category of a BFCL entry id (``multiple_59``, ``live_simple_12-3-1``)."""
    owners = [c for c in CATEGORIES if re.fullmatch(rf"{c}_\d[\d-]*", entry_id)]
    if not owners:
        raise CliError(
            CliCode.UNKNOWN_SCENARIO,
            f"not a BFCL entry id: {entry_id!r} (ids look like multiple_59 or live_simple_12-3-1)",
        )
    return max(owners, key=len)


def chosen(all_entries: list[BfclEntry], ids: list[str]) -> list[BfclEntry]:
    """The entries named by ``ids``, in BFCL's order; an id BFCL does not have is an error."""
    known = {entry.id for entry in all_entries}
    missing = [i for i in ids if i not in known]
    if missing:
        raise CliError(CliCode.UNKNOWN_SCENARIO, f"BFCL has no entry {', '.join(missing)}")
    return [entry for entry in all_entries if entry.id in ids]


def sample(all_entries: list[BfclEntry], n: int | None, seed: int) -> list[BfclEntry]:
    """``n`` entries drawn with ``seed`` (all of them when ``n`` is None or larger), in
    BFCL's order."""
    if n is None or n >= len(all_entries):
        return list(all_entries)
    picked = set(random.Random(seed).sample(range(len(all_entries)), n))
    return [entry for i, entry in enumerate(all_entries) if i in picked]
