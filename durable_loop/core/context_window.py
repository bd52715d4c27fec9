"""The context window: which transcript messages one request sends.

The system prompt and the newest messages are kept; an assistant message with tool calls
and its results form one unit that is kept or left out whole; a stored summary replaces
the prefix it covers. What was left out is reported, for the trace and for the optional
summarisation step.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, Field

from durable_loop.core.canonical_json import canonical_dumps
from durable_loop.core.endpoint import ContextWindow
from durable_loop.core.messages import Message
from durable_loop.core.tools import ToolSpec

SUMMARY_PREFIX = "Summary of the earlier conversation (older messages are left out):\n"


@dataclass(frozen=True)
class TranscriptItem:
    seq: int
    message: Message
    summary_of: int | None = None
    """For a stored summary: it replaces messages with seq < this."""


class ContextReport(BaseModel):
    """What the window left out of one request (recorded in the assistant's meta)."""

    budget_chars: int | None = None
    used_chars: int = 0
    """Characters the request carries; measured only when a window applies."""
    dropped: int = 0
    dropped_chars: int = 0
    dropped_seqs: list[int] = Field(default_factory=list)
    first_kept_seq: int | None = None
    summary_seq: int | None = None
    summary_covers_upto: int | None = None
    over_budget: bool = Field(default=False, description="The newest unit alone exceeds it")


class Context(BaseModel):
    messages: list[Message]
    report: ContextReport


def message_chars(message: Message) -> int:
    size = len(message.content or "")
    for call in message.tool_calls:
        size += len(call.name) + len(call.arguments)
    if message.envelope is not None and message.content is None:
        size += len(message.envelope.to_content())
    return size


def tools_chars(tools: list[ToolSpec]) -> int:
    return sum(
        len(
            canonical_dumps(
                t.model_dump(mode="json", include={"name", "description", "parameters"})
            )
        )
        for t in tools
    )


def _units(items: list[TranscriptItem]) -> list[list[TranscriptItem]]:
    units: list[list[TranscriptItem]] = []
    for item in items:
        if item.message.role == "tool" and units:
            units[-1].append(item)  # a result stays with its call
        else:
            units.append([item])
    return units


def build_context(
    items: list[TranscriptItem],
    *,
    system_prompt: str | None,
    window: ContextWindow | None,
    fixed_chars: int = 0,
) -> Context:
    """Messages to send, oldest first, and what was left out.

    ``fixed_chars`` counts what the request carries besides messages (tool definitions).
    """
    summaries = [i for i in items if i.summary_of is not None]
    summary = max(summaries, key=lambda i: i.seq) if summaries else None
    body = [i for i in items if i.summary_of is None]
    report = ContextReport()
    head: list[Message] = [Message.system(system_prompt)] if system_prompt else []
    if summary is not None and summary.summary_of is not None:
        body = [i for i in body if i.seq >= summary.summary_of]
        head.append(summary.message)
        report.summary_seq, report.summary_covers_upto = summary.seq, summary.summary_of
    budget = window.budget_chars() if window else None
    units = _units(body)
    kept: list[list[TranscriptItem]] = []
    used = 0
    if budget is None:
        kept = units  # sizes are only measured against a window
    else:
        used = fixed_chars + sum(message_chars(m) for m in head)
        for unit in reversed(units):
            size = sum(message_chars(i.message) for i in unit)
            if kept and used + size > budget:
                break
            kept.append(unit)
            used += size
        kept.reverse()
    dropped = [i for unit in units[: len(units) - len(kept)] for i in unit]
    report.budget_chars = budget
    report.used_chars = used
    report.over_budget = budget is not None and used > budget
    report.dropped = len(dropped)
    report.dropped_chars = sum(message_chars(i.message) for i in dropped)
    report.dropped_seqs = [i.seq for i in dropped]
    report.first_kept_seq = kept[0][0].seq if kept else None
    messages = head + [i.message for unit in kept for i in unit]
    return Context(messages=messages, report=report)


def summary_message(text: str) -> Message:
    return Message(role="system", content=SUMMARY_PREFIX + text.strip(), synthetic=True)
