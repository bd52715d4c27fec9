"""Replay tools: registered under the recorded names, they answer a call matching a
recorded one (same tool, same canonical arguments) with the recorded result. Any other
call is new: with ``run_new`` and the tool among the ``given`` ones (``--tools``) its real
body runs, otherwise it is answered with :data:`NOT_RECORDED` and nothing runs. Every call
is logged per session, so the report tells served, ran and not-run calls apart.

A tool among the ``given`` ones is offered with its real schema; the others with a
permissive object schema (the recorded rows name the tools offered, not their schemas):
the model then sees the names, not the original parameter descriptions.
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
    ran: bool = False


@dataclass
class ReplayTools:
    results: dict[tuple[str, str], JsonValue] = field(default_factory=dict)
    names: list[str] = field(default_factory=list)
    given: ToolRegistry = field(default_factory=ToolRegistry)
    run_new: bool = False
    log: dict[str, list[ReplayedCall]] = field(default_factory=lambda: defaultdict(list))

    @classmethod
    def of(
        cls,
        sessions: list[RecordedSession],
        given: ToolRegistry | None = None,
        *,
        run_new: bool = False,
    ) -> ReplayTools:
        tools = cls(given=given or ToolRegistry(), run_new=run_new)
        for session in sessions:
            for name in session.tool_names:
                if name not in tools.names:
                    tools.names.append(name)
            for message in session.messages:
                for call in message.calls:
                    if call.has_result:
                        tools.results.setdefault((call.name, call.arguments), call.result)
        return tools

    @property
    def schemas_given(self) -> bool:
        """Every offered tool has its real schema (from ``--tools``)."""
        return all(self.given.get(name) is not None for name in self.names)

    def body(self, name: str) -> ToolFunction:
        async def replay(ctx: ToolContext, **arguments: Any) -> object:
            key = (name, canonical_dumps(arguments))
            if key in self.results:
                self.log[ctx.session_id].append(
                    ReplayedCall(name=name, arguments=key[1], served=True)
                )
                return self.results[key]
            real = self.given.get(name) if self.run_new else None
            self.log[ctx.session_id].append(
                ReplayedCall(name=name, arguments=key[1], served=False, ran=real is not None)
            )
            if real is None:
                return NOT_RECORDED
            return await real.call(arguments, ctx)

        return replay

    def spec(self, name: str) -> ToolSpec:
        real = self.given.get(name)
        if real is not None:  # the schema only: the replay decides how a call is answered
            spec = real.spec
            return ToolSpec(name=name, description=spec.description, parameters=spec.parameters)
        return ToolSpec(
            name=name,
            description=f"{name} (replayed from a recorded session)",
            parameters=PERMISSIVE_SCHEMA,
        )

    def registry(self) -> ToolRegistry:
        registry = ToolRegistry()
        for name in self.names:
            registry.add(self.spec(name), self.body(name))
        return registry

    def calls_of(self, session_id: str) -> list[ReplayedCall]:
        return list(self.log.get(session_id, []))
