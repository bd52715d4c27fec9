"""What a scenario is: tools, a user prompt, assertions on outcome and trace, and the
ideal model trajectory the scripted (offline) behaviours distort.

The trajectory is a *policy* over what the model sees (the request's messages), not a
fixed list of replies, so the same scenario reacts to tool errors, guards and
recovery prompts exactly as a real model would have to.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import JsonValue

from durable_loop.core.approvals import PendingToolCall
from durable_loop.core.messages import Message
from durable_loop.core.proposals import Verdict
from durable_loop.core.registry import ToolRegistry

DONE = "Done."
FINAL_RULE = f'When you are finished, reply with exactly "{DONE}" and nothing else.'


@dataclass(frozen=True)
class Call:
    name: str
    arguments: dict[str, Any] | str
    """A dict, or a raw (possibly invalid) JSON text."""


@dataclass(frozen=True)
class Action:
    """One model reply: tool calls, or a final text when ``calls`` is empty."""

    calls: tuple[Call, ...] = ()
    text: str = ""

    @classmethod
    def final(cls, text: str = DONE) -> Action:
        return cls(text=text)

    @classmethod
    def call(cls, name: str, arguments: dict[str, Any] | str) -> Action:
        return cls(calls=(Call(name, arguments),))


@dataclass(frozen=True)
class ToolResult:
    name: str
    ok: bool
    codes: tuple[str, ...]
    arguments: str


@dataclass(frozen=True)
class ModelView:
    """What the scripted model reads from one request."""

    results: tuple[ToolResult, ...]
    tools_sent: bool
    last_role: str
    last_user: str
    offered: dict[str, frozenset[str]] = field(default_factory=dict)
    """Tool name -> the argument names its schema offers in this request."""
    json_asked: bool = False
    """The request asks for a typed answer (``response_format`` json_schema)."""

    def ok(self, name: str) -> bool:
        return any(r.name == name and r.ok for r in self.results)

    def failed_with(self, code: str) -> bool:
        return any(code in r.codes for r in self.results)

    @property
    def last(self) -> ToolResult | None:
        return self.results[-1] if self.results else None


def offered_arguments(tools: object) -> dict[str, frozenset[str]]:
    """Argument names per tool from an OpenAI-shaped ``tools`` list."""
    offered: dict[str, frozenset[str]] = {}
    for tool in tools if isinstance(tools, list) else []:
        fn = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(fn, dict):
            props = (fn.get("parameters") or {}).get("properties") or {}
            offered[str(fn.get("name"))] = frozenset(props)
    return offered


def view_of(messages: list[dict[str, Any]], tools_sent: bool, tools: object = None) -> ModelView:
    """Read tool results (name, ok, error codes, the arguments the call used) from an
    OpenAI-shaped message list."""
    args_by_id: dict[str, tuple[str, str]] = {}
    results: list[ToolResult] = []
    last_user = ""
    for message in messages:
        role = message.get("role")
        if role == "user":
            last_user = str(message.get("content") or "")
        for call in message.get("tool_calls") or []:
            fn = call.get("function") or {}
            args_by_id[str(call.get("id"))] = (str(fn.get("name")), str(fn.get("arguments")))
        if role == "tool":
            name, arguments = args_by_id.get(str(message.get("tool_call_id")), ("", "{}"))
            ok, codes = _envelope(str(message.get("content") or ""))
            results.append(ToolResult(name or str(message.get("name")), ok, codes, arguments))
    last_role = str(messages[-1].get("role")) if messages else ""
    return ModelView(tuple(results), tools_sent, last_role, last_user, offered_arguments(tools))


def _envelope(content: str) -> tuple[bool, tuple[str, ...]]:
    try:
        data = json.loads(content)
    except ValueError:
        return False, ()
    if not isinstance(data, dict):
        return False, ()
    codes = tuple(str(e.get("code")) for e in data.get("errors") or [] if isinstance(e, dict))
    return bool(data.get("ok")), codes


@dataclass
class Trace:
    """What assertions read after a run: the outcome, the stored transcript, the draft,
    and the (op, actor) of every decision on a held tool call."""

    status: str
    reply: str | None
    tool_calls: list[tuple[str, bool, list[str]]]
    transcript: list[Message]
    draft: JsonValue
    error_code: str | None = None
    session_id: str = ""
    audit: list[tuple[str, str]] = field(default_factory=list)
    output: JsonValue = None
    """The typed answer (scenarios with an output schema)."""

    def ok_calls(self, name: str) -> int:
        return sum(1 for n, ok, _ in self.tool_calls if n == name and ok)

    def codes(self) -> set[str]:
        return {c for _, _, codes in self.tool_calls for c in codes}


@dataclass(frozen=True)
class ApproverVerdict:
    """A scripted person's decision on a held tool call."""

    verdict: Verdict
    arguments: dict[str, JsonValue] | None = None
    comment: str | None = None


Check = Callable[[Trace], list[str]]
Policy = Callable[[ModelView], Action]
Approver = Callable[[PendingToolCall], ApproverVerdict]


@dataclass(frozen=True)
class Scenario:
    name: str
    prompt: str
    policy: Policy
    check: Check
    uses_tools: bool = True
    runtime: dict[str, JsonValue] = field(default_factory=dict)
    extra_tools: Callable[[], ToolRegistry] | None = None
    description: str = ""
    entry: str | None = None
    """The suite entry the scenario runs (a BFCL entry id), written with each run."""
    approver: Approver | None = None
    """Decides the calls held for approval (the scenario's tools need it)."""
    output_schema: dict[str, JsonValue] | None = None
    """Sent with the prompt: the final answer must be JSON valid against it."""


# ---------------------------------------------------------------- shared assertions


def finished(trace: Trace) -> list[str]:
    problems = []
    if trace.status != "completed":
        problems.append(f"status {trace.status} ({trace.error_code})")
    elif (trace.reply or "").strip() != DONE:
        problems.append(f"final reply {(trace.reply or '')[:60]!r} is not {DONE!r}")
    return problems


def draft_has(trace: Trace, key: str, predicate: Callable[[JsonValue], bool]) -> list[str]:
    draft = trace.draft if isinstance(trace.draft, dict) else {}
    if key not in draft:
        return [f"draft has no /{key}"]
    if not predicate(draft[key]):
        return [f"draft /{key} = {str(draft[key])[:60]!r} is not as asked"]
    return []


def called_ok(trace: Trace, name: str) -> list[str]:
    return [] if trace.ok_calls(name) else [f"no successful {name} call"]
