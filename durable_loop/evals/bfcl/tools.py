"""An entry's functions as tools: BFCL's schema conversion, provider-safe names, and a
body that records the call (the arguments the loop executed) and returns a neutral result.

Entries reuse function names with other schemas, so the suite runs them in batches, one
worker each, in which a name means one spec.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import JsonValue

from durable_loop.core.registry import ToolContext, ToolFunction, ToolRegistry
from durable_loop.core.tool_names import provider_safe_name
from durable_loop.core.tools import ToolSpec
from durable_loop.evals.bfcl.entries import BfclEntry, is_multi_turn
from durable_loop.evals.bfcl.package import Bfcl

NEUTRAL_RESULT: JsonValue = {"status": "done"}


def entry_specs(bfcl: Bfcl, entry: BfclEntry) -> list[ToolSpec]:
    """The entry's functions as BFCL's OpenAI-style handlers send them, under names every
    provider accepts (the original kept beside a mapped one). Single-turn: a repeat of an
    identical call is answered from the first (``dedupe``), not executed twice; multi-turn
    tools change state (``cd`` twice is two moves), so every call runs."""
    taken: set[str] = set()
    specs = []
    for original, tool in zip(entry.functions, bfcl.to_openai_tools(entry.functions), strict=True):
        function = tool["function"]
        name = provider_safe_name(original["name"], taken)
        specs.append(
            ToolSpec(
                name=name,
                original_name=original["name"] if original["name"] != name else None,
                description=function.get("description", ""),
                parameters=function["parameters"],
                dedupe=not is_multi_turn(entry.category),
            )
        )
    return specs


@dataclass
class CallLog:
    """The calls each session executed: (the function's BFCL name, its arguments)."""

    calls: dict[str, list[tuple[str, dict[str, Any]]]] = field(
        default_factory=lambda: defaultdict(list)
    )

    def recorder(self, spec: ToolSpec) -> ToolFunction:
        original = spec.original_name or spec.name

        async def record(ctx: ToolContext, **arguments: Any) -> JsonValue:
            self.calls[ctx.session_id].append((original, arguments))
            return NEUTRAL_RESULT

        return record

    def of(self, session_id: str) -> list[tuple[str, dict[str, Any]]]:
        return list(self.calls.get(session_id, []))


def batches(specs_per_entry: list[list[ToolSpec]]) -> list[list[int]]:
    """Entry indexes grouped so that, within a group, each tool name has one spec."""
    groups: list[tuple[dict[str, ToolSpec], list[int]]] = []
    for index, specs in enumerate(specs_per_entry):
        for known, members in groups:
            if all(known.get(s.name, s) == s for s in specs):
                known.update({s.name: s for s in specs})
                members.append(index)
                break
        else:
            groups.append(({s.name: s for s in specs}, [index]))
    return [members for _, members in groups]


def batch_registry(specs: list[ToolSpec], body: Callable[[ToolSpec], ToolFunction]) -> ToolRegistry:
    registry = ToolRegistry()
    for spec in {s.name: s for s in specs}.values():
        registry.add(spec, body(spec))
    return registry
