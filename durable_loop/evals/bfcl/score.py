"""Score one entry by BFCL's rules from the calls its session executed.

AST categories: the executed calls, as BFCL's decoded output (``[{name: arguments}]``),
through BFCL's ``ast_checker``. Irrelevance: right when no call was executed. Relevance:
right when one was (BFCL's ``is_empty_output`` on the same output).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from durable_loop.evals.bfcl.entries import BfclEntry, no_call_expected
from durable_loop.evals.bfcl.package import CHECKER_MODEL, Bfcl


@dataclass(frozen=True)
class Score:
    ok: bool
    error_type: str | None = None
    errors: list[str] = field(default_factory=list)

    def problems(self, entry: BfclEntry) -> list[str]:
        if self.ok:
            return []
        return [f"{entry.id}: {self.error_type}: {'; '.join(self.errors)}"[:400]]


def score(bfcl: Bfcl, entry: BfclEntry, calls: list[tuple[str, dict[str, Any]]]) -> Score:
    output = [{bfcl.checker_name(name): copy.deepcopy(args)} for name, args in calls]
    if no_call_expected(entry.category):
        if calls:
            names = ", ".join(name for name, _ in calls)
            return Score(False, "irrelevance_error:call_executed", [f"executed {names}"])
        return Score(True)
    if entry.answer is None:
        if bfcl.is_empty_output(output):
            return Score(False, "relevance_error:no_call_executed", ["no call executed"])
        return Score(True)
    if not bfcl.is_call_list(output):
        return Score(False, "ast_decoder:decoder_wrong_output_format", [str(output)[:200]])
    result = bfcl.ast_checker(
        copy.deepcopy(entry.functions),
        output,
        copy.deepcopy(entry.answer),
        bfcl.python,
        entry.category,
        CHECKER_MODEL,
    )
    if result["valid"]:
        return Score(True)
    return Score(False, str(result.get("error_type")), [str(e) for e in result.get("error", [])])
