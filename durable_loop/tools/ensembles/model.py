"""Ensembles: named groups of tools with shared defaults, enabled or disabled as a whole.

An ensemble is a way to *declare* tools; what the loop consumes is still a
:class:`ToolRegistry` (specs + callables) and allow/deny lists. Defaults fill the fields a
tool leaves unset; a tool's own explicit values win::

    io = Ensemble("io", defaults=EnsembleDefaults(timeout_s=10, dedupe=True))

    @io.tool()
    def read_file(path: str) -> str: ...

    registry = registry_from([io])
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from durable_loop.core.registry import Reconcile, ToolFunction, ToolRegistry
from durable_loop.core.retry import RetrySettings
from durable_loop.core.sub_agent_config import SubAgentConfig
from durable_loop.core.tools import ToolEffect, ToolSpec, check_tool_name

F = TypeVar("F", bound=ToolFunction)


class EnsembleDefaults(BaseModel):
    """Values every tool of the ensemble gets unless it sets its own."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    timeout_s: float | None = Field(default=None, gt=0)
    retry: RetrySettings | None = None
    task_queue: str | None = Field(default=None, min_length=1)
    heartbeat_timeout_s: float | None = Field(default=None, gt=0)
    dedupe: bool | None = None
    requires_approval: bool | None = None
    effect: ToolEffect | None = None
    local: bool | None = None
    long_running: bool | None = None

    def values(self) -> dict[str, Any]:
        return {k: v for k, v in self if v is not None}


@dataclass(frozen=True)
class EnsembleTool:
    spec: ToolSpec
    fn: ToolFunction
    enabled: bool = True
    explicit: frozenset[str] = frozenset()
    reconcile: Reconcile | None = None


class Ensemble:
    def __init__(
        self,
        name: str,
        *,
        enabled: bool = True,
        description: str = "",
        defaults: EnsembleDefaults | None = None,
    ) -> None:
        self.name = check_tool_name(name)
        self.enabled = enabled
        self.description = description
        self.defaults = defaults or EnsembleDefaults()
        self._tools: dict[str, EnsembleTool] = {}
        self._sub_agents: dict[str, SubAgentConfig] = {}

    def add(
        self,
        spec: ToolSpec,
        fn: ToolFunction,
        *,
        enabled: bool = True,
        explicit: Iterable[str] | None = None,
        reconcile: Reconcile | None = None,
    ) -> EnsembleTool:
        """Add a tool under a ready-made spec; ``explicit`` names fields defaults must not fill
        (default: the fields set when the spec was built)."""
        if spec.name in self._tools:
            raise ValueError(f"ensemble {self.name!r}: tool {spec.name!r} is already declared")
        fields = frozenset(explicit if explicit is not None else spec.model_fields_set)
        tool = EnsembleTool(spec=spec, fn=fn, enabled=enabled, explicit=fields, reconcile=reconcile)
        self._tools[spec.name] = tool
        return tool

    def register(
        self,
        fn: ToolFunction,
        *,
        name: str | None = None,
        description: str | None = None,
        parameters: dict[str, JsonValue] | None = None,
        enabled: bool = True,
        **options: Any,
    ) -> EnsembleTool:
        """Declare ``fn``; ``options`` are :class:`ToolSpec` fields (timeout_s, dedupe, …)."""
        built = ToolRegistry().register(
            fn, name=name, description=description, parameters=parameters, **options
        )
        explicit = options.keys() - {"reconcile"}
        return self.add(
            built.spec, fn, enabled=enabled, explicit=explicit, reconcile=built.reconcile
        )

    def tool(self, **options: Any) -> Callable[[F], F]:
        """Decorator form of :meth:`register`."""

        def decorate(fn: F) -> F:
            self.register(fn, **options)
            return fn

        return decorate

    def add_sub_agent(self, config: SubAgentConfig) -> SubAgentConfig:
        """Declare a sub-agent (see ``ToolRegistry.add_sub_agent``); registered with the
        ensemble's tools when it is enabled."""
        check_tool_name(config.name)
        if config.name in self._tools or config.name in self._sub_agents:
            raise ValueError(f"ensemble {self.name!r}: {config.name!r} is already declared")
        self._sub_agents[config.name] = config
        return config

    def tool_names(self) -> list[str]:
        """Every declared tool, enabled or not."""
        return list(self._tools)

    def sub_agent_names(self) -> list[str]:
        return list(self._sub_agents)

    def specs(self) -> list[ToolSpec]:
        """The effective specs of the enabled tools (none when the ensemble is disabled)."""
        if not self.enabled:
            return []
        return [self._effective(t) for t in self._tools.values() if t.enabled]

    def _effective(self, tool: EnsembleTool) -> ToolSpec:
        fill = {k: v for k, v in self.defaults.values().items() if k not in tool.explicit}
        return ToolSpec.model_validate(
            {**tool.spec.model_dump(exclude_unset=False), **fill, "ensemble": self.name}
        )

    def into(self, registry: ToolRegistry) -> ToolRegistry:
        """Register the enabled tools in ``registry`` (in place) and return it."""
        if not self.enabled:
            return registry
        for tool in self._tools.values():
            if tool.enabled:
                registry.add(self._effective(tool), tool.fn, reconcile=tool.reconcile)
        for config in self._sub_agents.values():
            registry.add_sub_agent(config, ensemble=self.name)
        return registry

    def __repr__(self) -> str:
        state = "enabled" if self.enabled else "disabled"
        return f"Ensemble({self.name!r}, {state}, tools={self.tool_names()})"


def registry_from(ensembles: Iterable[Ensemble], base: ToolRegistry | None = None) -> ToolRegistry:
    """One registry with the enabled tools of every enabled ensemble (names must be unique)."""
    registry = base if base is not None else ToolRegistry()
    for ensemble in ensembles:
        ensemble.into(registry)
    return registry
