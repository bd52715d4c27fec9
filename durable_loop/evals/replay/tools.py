"""Replay tools: registered under the recorded names, they answer a call matching a
recorded one (same tool, same canonical arguments) with the recorded result, and answer
any other call with :data:`NOT_RECORDED` without running anything. Every call is logged
per session, so the report tells served calls from new ones.

The recorded settings name no tool schemas (the worker's registry holds those), so each
tool is offered with a permissive object schema: the model sees the names, not the
original parameter descriptions.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, JsonValue

from durable_loop.core.canonical_json import canonical_dumps
from durable_loop.core.registry import ToolContext, ToolFunction, ToolRegistry
from durable_loop.core.tools import ToolSpec
from durable_loop.evals.replay.recorded import RecordedSession

PERMISSIVE_SCHEMA: dict[str, JsonValue] = {"type": "object", "additionalProperties": True}
NOT_RECORDED: JsonValue = {
    "status": "not_recorded",
    "note": "this call was not in the recorded session; the replay did not run it",
}


class ReplayedCall(BaseModel):
    name: str
    arguments: str
    served: bool


@dataclass
class ReplayTools:
    results: dict[tuple[str, str], JsonValue] = field(default_factory=dict)
    names: list[str] = field(default_factory=list)
    log: dict[str, list[ReplayedCall]] = field(default_factory=lambda: defaultdict(list))

    @classmethod
    def of(cls, sessions: list[RecordedSession]) -> ReplayTools:
        tools = cls()
        for session in sessions:
            for name in session.tool_names:
                if name not in tools.names:
                    tools.names.append(name)
            for message in session.messages:
                for call in message.calls:
                    if call.has_result:
                        tools.results.setdefault((call.name, call.arguments), call.result)
        return tools

    def body(self, name: str) -> ToolFunction:
        async def replay(ctx: ToolContext, **arguments: Any) -> JsonValue:
            key = (name, canonical_dumps(arguments))
            served = key in self.results
            self.log[ctx.session_id].append(
                ReplayedCall(name=name, arguments=key[1], served=served)
            )
            return self.results[key] if served else NOT_RECORDED

        return replay

    def registry(self) -> ToolRegistry:
        registry = ToolRegistry()
        for name in self.names:
            spec = ToolSpec(
                name=name,
                description=f"{name} (replayed from a recorded session)",
                parameters=PERMISSIVE_SCHEMA,
            )
            registry.add(spec, self.body(name))
        return registry

    def calls_of(self, session_id: str) -> list[ReplayedCall]:
        return list(self.log.get(session_id, []))
