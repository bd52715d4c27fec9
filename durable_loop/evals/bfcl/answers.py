"""What the scripted (offline) model plays for a single-turn entry: BFCL's first possible
answer."""

from __future__ import annotations

from typing import Any

from durable_loop.core.tools import ToolSpec
from durable_loop.evals.bfcl.entries import BfclEntry
from durable_loop.evals.scenario import Action, Call, ModelView, Policy

OMITTED = ""
"""In BFCL's possible answers, the option meaning "may be left out"."""


def _first_option(options: Any) -> Any:
    """One right value from BFCL's options (lists of acceptable values, nested): left out
    when leaving it out is right."""
    if isinstance(options, list):
        return OMITTED if not options or OMITTED in options else _value(options[0])
    return _value(options)


def _value(value: Any) -> Any:
    if isinstance(value, dict):
        picked = {k: _first_option(v) for k, v in value.items()}
        return {k: v for k, v in picked.items() if v != OMITTED}
    if isinstance(value, list):
        return [_value(item) for item in value]
    return value


def answer_calls(entry: BfclEntry, specs: list[ToolSpec]) -> list[tuple[str, Any]]:
    """BFCL's first possible answer as calls of the registered tools: (name, arguments)."""
    names = {spec.original_name or spec.name: spec.name for spec in specs}
    return [
        (names.get(function, function), _value(arguments))
        for answer in entry.answer or []
        for function, arguments in answer.items()
    ]


def answer_policy(entry: BfclEntry, specs: list[ToolSpec]) -> Policy:
    """The trajectory the scripted behaviours distort: BFCL's first possible answer, all
    calls in one reply, then "Done."; no call for an entry that has no answer."""
    calls = tuple(Call(name, arguments) for name, arguments in answer_calls(entry, specs))

    def policy(view: ModelView) -> Action:
        if not calls or view.results:
            return Action.final()
        return Action(calls=calls)

    return policy
