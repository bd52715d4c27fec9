"""Application-registered tools: specs plus the callables that activities execute.

The core ships no tools. Register them explicitly, or declare them from typed Python
functions whose signature and docstring generate the JSON schema.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
from collections.abc import Callable, Iterable
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any, TypeVar, get_type_hints

from pydantic import BaseModel, ConfigDict, JsonValue, create_model

from durable_loop.core.errors import DurableLoopError, ErrorCode
from durable_loop.core.proposals import NEVER_MODEL_FACING
from durable_loop.core.retry import RetrySettings
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
class RegisteredTool:
    spec: ToolSpec
    fn: ToolFunction
    takes_context: bool
    is_async: bool

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
    """JSON schema of a function's parameters (excluding ``ctx``), via pydantic."""
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
    model = create_model(f"{fn.__name__}_args", **fields)
    schema: dict[str, JsonValue] = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():  # type: ignore[union-attr]
        if isinstance(prop, dict):
            prop.pop("title", None)
    schema.setdefault("properties", {})
    return schema


class ToolRegistry:
    def __init__(self, tools: Iterable[RegisteredTool] = ()) -> None:
        self._tools: dict[str, RegisteredTool] = {}
        for tool in tools:
            self._add(tool)

    def _add(self, tool: RegisteredTool) -> None:
        if tool.spec.name in self._tools:
            raise ValueError(f"tool {tool.spec.name!r} is already registered")
        if tool.spec.name in NEVER_MODEL_FACING:
            raise ValueError(f"{tool.spec.name!r} runs only from a human decision, never as a tool")
        self._tools[tool.spec.name] = tool

    def register(
        self,
        fn: ToolFunction,
        *,
        name: str | None = None,
        description: str | None = None,
        parameters: dict[str, JsonValue] | None = None,
        timeout_s: float | None = None,
        retry: RetrySettings | None = None,
        **placement: Any,
    ) -> RegisteredTool:
        """Register ``fn``; without ``parameters`` the schema comes from its signature.

        ``placement`` takes the other :class:`ToolSpec` fields (``dedupe``,
        ``requires_approval``, ``local``, ``long_running``, ``task_queue``,
        ``heartbeat_timeout_s``, ``ensemble``).
        """
        spec = ToolSpec(
            name=name or fn.__name__,
            description=description if description is not None else _doc_summary(fn),
            parameters=parameters if parameters is not None else schema_from_function(fn),
            timeout_s=timeout_s,
            retry=retry,
            **placement,
        )
        return self.add(spec, fn)

    def add(self, spec: ToolSpec, fn: ToolFunction) -> RegisteredTool:
        """Register ``fn`` under a ready-made spec (ensembles and MCP servers build their own)."""
        tool = RegisteredTool(
            spec=spec,
            fn=fn,
            takes_context="ctx" in inspect.signature(fn).parameters,
            is_async=inspect.iscoroutinefunction(fn),
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
                **placement,
            )
            return fn

        return decorate

    def get(self, name: str) -> RegisteredTool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self, names: Iterable[str] | None = None) -> list[ToolSpec]:
        if names is None:
            return [t.spec for t in self._tools.values()]
        return [self._tools[n].spec for n in names if n in self._tools]

    def catalog(self) -> ToolCatalog:
        return ToolCatalog(tools=self.specs())

    def merged(self, other: ToolRegistry) -> ToolRegistry:
        return ToolRegistry([*self._tools.values(), *other._tools.values()])

    def __len__(self) -> int:
        return len(self._tools)
