"""Tool specifications: what the loop and the model know about a tool (no callables)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator, model_validator

from durable_loop.core.retry import RetrySettings
from durable_loop.core.tool_names import TOOL_NAME_PATTERN as TOOL_NAME_PATTERN
from durable_loop.core.tool_names import check_tool_name


def _unset(value: object) -> bool:
    """Left out of payloads while unset, so specs keep the histories they had before."""
    return value is None


PURPOSE_CHARS = 100
_CLAUSE_END = re.compile(r"[.;:](?:\s|$)|\n")


def tool_purpose(description: str) -> str:
    """What a tool does, in a few words: its description's first clause (up to the first
    ``.``, ``;``, ``:`` or line break), cut at a word within :data:`PURPOSE_CHARS`."""
    clause = _CLAUSE_END.split(description.strip(), maxsplit=1)[0].strip()
    if len(clause) <= PURPOSE_CHARS:
        return clause
    return clause[: PURPOSE_CHARS - 1].rsplit(" ", 1)[0] + "…"


def _empty_object_schema() -> dict[str, JsonValue]:
    return {"type": "object", "properties": {}}


ToolEffect = Literal["repeatable", "once"]
"""What retrying a call's attempt may do: ``repeatable`` (run the body again: at least once,
exactly once for a tool that honours ``ctx.idempotency_key``) or ``once`` (never again
without knowing whether the first attempt's effect happened)."""


class ToolSpec(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    original_name: str | None = Field(
        default=None,
        exclude_if=_unset,
        description="The tool's own name when ``name`` is its provider-safe mapping "
        "(see durable_loop.core.tool_names); never sent to the model",
    )
    description: str = ""
    parameters: dict[str, JsonValue] = Field(default_factory=_empty_object_schema)
    timeout_s: float | None = Field(default=None, gt=0)
    retry: RetrySettings | None = None
    ensemble: str | None = Field(default=None, description="The group the tool came from")
    dedupe: bool = Field(
        default=False,
        description="An exact repeat (name + canonical arguments) within a session returns "
        "the recorded result instead of running again",
    )
    local: bool = Field(
        default=False, description="Short and side-effect free: runs as a local activity"
    )
    requires_approval: bool = Field(
        default=False, description="Each call waits for a person's decision before it runs"
    )
    effect: ToolEffect = Field(
        default="repeatable",
        description='"once": the effect must not be repeated blindly. The runtime records '
        "that an attempt began before the body runs; an attempt that died inside it (a worker "
        "killed, a timeout) is never re-run: the tool's reconcile function says whether it "
        "happened, or the call ends TOOL_CALL_IN_DOUBT",
    )
    long_running: bool = Field(
        default=False,
        description="Runs on its own task queue, heartbeats, and is cancelled with the session",
    )
    task_queue: str | None = Field(
        default=None, description="Task queue of a long-running tool (default: <queue>-long)"
    )
    heartbeat_timeout_s: float | None = Field(default=None, gt=0)
    implicit_args: tuple[str, ...] = Field(
        default=(),
        description="Optional arguments the runtime fills in (e.g. the session's workspace); "
        "the tool transform tools_hide_implicit_arguments keeps them from the model",
    )
    sub_agent: bool = Field(
        default=False,
        description="A sub-agent (its configuration travels beside the catalog): the call "
        "runs as a child workflow, not an activity",
    )

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return check_tool_name(value)

    @model_validator(mode="after")
    def _placement(self) -> ToolSpec:
        if self.local and self.long_running:
            raise ValueError(f"tool {self.name!r} cannot be both local and long_running")
        return self


class ToolCatalog(BaseModel):
    """The tools a worker offers, as recorded once per run in workflow history."""

    tools: list[ToolSpec] = Field(default_factory=list)

    def by_name(self) -> dict[str, ToolSpec]:
        return {t.name: t for t in self.tools}


def visible_tool_names(
    catalog: ToolCatalog, allowlist: list[str] | None, denylist: list[str]
) -> list[str]:
    """Masking: the tools sent to the model, and the only ones it may execute."""
    deny = set(denylist)
    allow = None if allowlist is None else set(allowlist)
    return [
        t.name for t in catalog.tools if t.name not in deny and (allow is None or t.name in allow)
    ]
