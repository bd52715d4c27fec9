"""Application-registered tools: specs plus the callables that activities execute.

The core ships no tools. Register them explicitly, or declare them from typed Python
functions whose signature and docstring generate the JSON schema.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
from collections.abc import Awaitable, Callable, Iterable
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any, TypeVar, get_type_hints

from pydantic import BaseModel, ConfigDict, JsonValue, create_model

from durable_loop.core.errors import ConfigError, DurableLoopError, ErrorCode
from durable_loop.core.proposals import NEVER_MODEL_FACING
from durable_loop.core.retry import RetrySettings
from durable_loop.core.sub_agent_config import SubAgentConfig, task_parameters
from durable_loop.core.tools import ToolCatalog, ToolSpec

ToolFunction = Callable[..., Any]
F = TypeVar("F", bound=ToolFunction)


class ToolContext(BaseModel):
    """Handed to tools that declare a ``ctx: ToolContext`` parameter."""

    model_config = ConfigDict(frozen=True)

    session_id: str
    workflow_id: str
    call_id: str
    turn: int
    attempt: int
    idempotency_key: str
    workspace_id: str | None = None


class ToolFailure(DurableLoopError):
    """Raise from a tool to return a coded failure envelope instead of retrying; ``code``
    is an :class:`ErrorCode` (or its value), ``data`` goes into the envelope."""

    def __init__(self, code: ErrorCode | str, message: str, data: JsonValue = None) -> None:
        super().__init__(ErrorCode(code), message)
        self.data = data


@dataclass(frozen=True)
class Reconciled:
    """What a tool's ``reconcile`` function found about an attempt that died inside the
    body: the effect happened (``result`` is what the model reads) or it did not (the body
    runs now)."""

    happened: bool
    result: object = None

    @classmethod
    def done(cls, result: object = None) -> Reconciled:
        return cls(happened=True, result=result)

    @classmethod
    def not_done(cls) -> Reconciled:
        return cls(happened=False)


Reconcile = Callable[[dict[str, JsonValue], ToolContext], "Reconciled | Awaitable[Reconciled]"]
"""``reconcile(arguments, ctx)``, sync or async: asks the outside system (by
``ctx.idempotency_key`` or the arguments) whether a call's effect happened."""


@dataclass(frozen=True)
class RegisteredTool:
    spec: ToolSpec
    fn: ToolFunction
    takes_context: bool
    is_async: bool
    reconcile: Reconcile | None = None

    async def reconciled(self, arguments: dict[str, JsonValue], ctx: ToolContext) -> Reconciled:
        """Ask ``reconcile`` (the tool has one) whether the call's effect happened."""
        assert self.reconcile is not None
        found = self.reconcile(arguments, ctx)
        if inspect.isawaitable(found):
            found = await found
        if not isinstance(found, Reconciled):
            raise TypeError(
                f"{self.spec.name}: reconcile returned {type(found).__name__}, not Reconciled"
            )
        return found

    async def call(
        self, arguments: dict[str, JsonValue], ctx: ToolContext, executor: Executor | None = None
    ) -> object:
        """A sync function runs in ``executor`` (default: the loop's default executor, which
        has only min(32, CPUs + 4) threads), with the caller's context variables."""
        kwargs: dict[str, Any] = dict(arguments)
        if self.takes_context:
            kwargs["ctx"] = ctx
        if self.is_async:
            return await self.fn(**kwargs)
        if executor is None:
            return await asyncio.to_thread(self.fn, **kwargs)
        run = functools.partial(contextvars.copy_context().run, self.fn, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(executor, run)


def _doc_summary(fn: ToolFunction) -> str:
    doc = inspect.getdoc(fn) or ""
    return doc.strip().split("\n\n")[0].replace("\n", " ").strip()


def schema_from_function(fn: ToolFunction) -> dict[str, JsonValue]:
    """JSON schema of a function's parameters (excluding ``ctx``), via pydantic. It allows no
    other properties: a call naming one would reach the function as an unexpected keyword."""
    hints = get_type_hints(fn, include_extras=True)
    fields: dict[str, Any] = {}
    for name, param in inspect.signature(fn).parameters.items():
        if name == "ctx":
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ValueError(f"{fn.__name__}: *args/**kwargs cannot become a tool schema")
        annotation = hints.get(name, Any)
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[name] = (annotation, default)
    model = create_model(f"{fn.__name__}_args", __config__=ConfigDict(extra="forbid"), **fields)
    schema: dict[str, JsonValue] = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():  # type: ignore[union-attr]
        if isinstance(prop, dict):
            prop.pop("title", None)
    schema.setdefault("properties", {})
    return schema


class ToolRegistry:
    def __init__(
        self,
        tools: Iterable[RegisteredTool] = (),
        sub_agents: Iterable[tuple[ToolSpec, SubAgentConfig]] = (),
    ) -> None:
        self._tools: dict[str, RegisteredTool] = {}
        self._sub_agents: dict[str, tuple[ToolSpec, SubAgentConfig]] = {}
        """Sub-agents have no callable: the session runs them as child workflows."""
        for tool in tools:
            self._add(tool)
        for spec, config in sub_agents:
            self._add_sub_agent(spec, config)

    def _check_new(self, name: str) -> None:
        if name in self._tools or name in self._sub_agents:
            raise ValueError(f"tool {name!r} is already registered")
        if name in NEVER_MODEL_FACING:
            raise ValueError(f"{name!r} runs only from a human decision, never as a tool")

    def _add(self, tool: RegisteredTool) -> None:
        self._check_new(tool.spec.name)
        self._tools[tool.spec.name] = tool

    def _add_sub_agent(self, spec: ToolSpec, config: SubAgentConfig) -> None:
        self._check_new(spec.name)
        self._sub_agents[spec.name] = (spec, config)

    def add_sub_agent(self, config: SubAgentConfig, **placement: Any) -> ToolSpec:
        """Register another agent the model can delegate a task to (a tool taking
        ``{"task": ...}``). A sub-agent naming itself among its tools is refused here;
        unknown tools or models and longer cycles when the worker is built
        (:func:`durable_loop.core.sub_agents.check_sub_agents`), all ``INVALID_SETTING``.
        ``placement``: other :class:`ToolSpec` fields, e.g. ``requires_approval``."""
        if config.name in config.tools:
            raise ConfigError(
                f"sub-agent {config.name!r} lists itself among its tools",
                code=ErrorCode.INVALID_SETTING,
                show_code=True,
            )
        spec = ToolSpec(
            name=config.name,
            description=config.description,
            parameters=task_parameters(),
            sub_agent=True,
            **placement,
        )
        self._add_sub_agent(spec, config)
        return spec

    def sub_agents(self) -> list[SubAgentConfig]:
        return [config for _, config in self._sub_agents.values()]

    def register(
        self,
        fn: ToolFunction,
        *,
        name: str | None = None,
        description: str | None = None,
        parameters: dict[str, JsonValue] | None = None,
        timeout_s: float | None = None,
        retry: RetrySettings | None = None,
        reconcile: Reconcile | None = None,
        **placement: Any,
    ) -> RegisteredTool:
        """Register ``fn``; without ``parameters`` the schema comes from its signature.

        ``placement`` takes the other :class:`ToolSpec` fields (``dedupe``,
        ``requires_approval``, ``effect``, ``local``, ``long_running``, ``task_queue``,
        ``heartbeat_timeout_s``, ``ensemble``). ``reconcile`` goes with ``effect="once"``:
        see :class:`Reconciled`.
        """
        spec = ToolSpec(
            name=name or fn.__name__,
            description=description if description is not None else _doc_summary(fn),
            parameters=parameters if parameters is not None else schema_from_function(fn),
            timeout_s=timeout_s,
            retry=retry,
            **placement,
        )
        return self.add(spec, fn, reconcile=reconcile)

    def add(
        self, spec: ToolSpec, fn: ToolFunction, *, reconcile: Reconcile | None = None
    ) -> RegisteredTool:
        """Register ``fn`` under a ready-made spec (ensembles and MCP servers build their own)."""
        if reconcile is not None and spec.effect != "once":
            raise ValueError(f"tool {spec.name!r}: reconcile goes with effect='once'")
        tool = RegisteredTool(
            spec=spec,
            fn=fn,
            takes_context="ctx" in inspect.signature(fn).parameters,
            is_async=inspect.iscoroutinefunction(fn),
            reconcile=reconcile,
        )
        self._add(tool)
        return tool

    def tool(
        self,
        *,
        name: str | None = None,
        description: str | None = None,
        timeout_s: float | None = None,
        retry: RetrySettings | None = None,
        reconcile: Reconcile | None = None,
        **placement: Any,
    ) -> Callable[[F], F]:
        """Decorator form of :meth:`register`."""

        def decorate(fn: F) -> F:
            self.register(
                fn,
                name=name,
                description=description,
                timeout_s=timeout_s,
                retry=retry,
                reconcile=reconcile,
                **placement,
            )
            return fn

        return decorate

    def get(self, name: str) -> RegisteredTool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return [*self._tools, *self._sub_agents]

    def specs(self, names: Iterable[str] | None = None) -> list[ToolSpec]:
        every = {n: t.spec for n, t in self._tools.items()}
        every |= {n: spec for n, (spec, _) in self._sub_agents.items()}
        if names is None:
            return list(every.values())
        return [every[n] for n in names if n in every]

    def catalog(self) -> ToolCatalog:
        return ToolCatalog(tools=self.specs())

    def merged(self, other: ToolRegistry) -> ToolRegistry:
        return ToolRegistry(
            [*self._tools.values(), *other._tools.values()],
            [*self._sub_agents.values(), *other._sub_agents.values()],
        )

    def __len__(self) -> int:
        return len(self._tools) + len(self._sub_agents)
