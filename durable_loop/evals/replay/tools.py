"""Replay tools: registered under the recorded names, they answer a call matching a
recorded one (same tool, same canonical arguments) with the recorded result. Any other
call is new: with ``run_new`` and the tool among the ``given`` ones (``--tools``) its real
body runs, otherwise it is answered with :data:`NOT_RECORDED` and nothing runs. Every call
is logged per session, so the report tells served, ran and not-run calls apart.

A tool among the ``given`` ones is offered with its real schema; the others with the
schema the recorded session offered them with (its replies record the offered schemas,
``tool_schemas``), or, in a session recorded before replies did, with a permissive object
schema: the model then sees the name, not the original parameter descriptions.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, JsonValue

from durable_loop.core.canonical_json import canonical_dumps
from durable_loop.core.registry import ToolContext, ToolFunction, ToolRegistry
from durable_loop.core.reply_meta import OfferedTool
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
    recorded: dict[str, OfferedTool] = field(default_factory=dict)
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
            tools.recorded.update(session.tool_schemas)
            for message in session.messages:
                for call in message.calls:
                    if call.has_result:
                        tools.results.setdefault((call.name, call.arguments), call.result)
        return tools

    @property
    def names_only(self) -> list[str]:
        """The tools offered by name only: neither given nor recorded with a schema."""
        return [n for n in self.names if self.given.get(n) is None and n not in self.recorded]

    @property
    def schema_source(self) -> str:
        """Where the offered schemas came from: ``given`` (``--tools``), ``recorded``,
        ``given and recorded``, ``names only`` when any tool had neither; ``none``."""
        if not self.names:
            return "none"
        if self.names_only:
            return "names only"
        given = any(self.given.get(name) is not None for name in self.names)
        recorded = any(self.given.get(name) is None for name in self.names)
        return " and ".join(s for s, used in (("given", given), ("recorded", recorded)) if used)

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
            return ToolSpec(
                name=name,
                original_name=spec.original_name,
                description=spec.description,
                parameters=spec.parameters,
            )
        offered = self.recorded.get(name)
        if offered is not None:
            return ToolSpec(
                name=name,
                original_name=offered.original_name,
                description=offered.description,
                parameters=offered.parameters,
            )
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
