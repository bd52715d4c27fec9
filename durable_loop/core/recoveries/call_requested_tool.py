"""``call_requested_tool``: a final reply that comes while an offered tool the person's
message names (not after "do not", "without", ...) has not been called in this message
is sent back, once per such tool, asking for that call. A small model that reads "reply
with Done." answers "Done." without the call it was asked for, or makes the first of two
requested calls and stops."""

from __future__ import annotations

from pydantic import Field

from durable_loop.core.recoveries.base import (
    Action,
    Event,
    Legacy,
    MessageFacts,
    Recovery,
    RecoverySettings,
)
from durable_loop.core.reply_check import requested_tool

NAME = "call_requested_tool"
PATCH_ID = "call-requested-tool"
DEFAULT_TEXT = (
    "My request asks for {name}, and you have not called it yet. Call {name} now, then "
    "answer the request with its result."
)


class CallRequestedTool(RecoverySettings):
    text: str = Field(
        default=DEFAULT_TEXT, description="Template with {name} (the tool the message named)"
    )


def judge(settings: CallRequestedTool, event: Event, facts: MessageFacts) -> Action | None:
    asked = facts.marks.setdefault(NAME, set())
    name = requested_tool(facts.request_text, facts.offered, facts.called | asked)
    if name is None or not facts.patched(PATCH_ID):
        return None
    asked.add(name)
    return Action(prompt=settings.text.format(name=name), tools_off=False, require_tool_call=True)


RECOVERY = Recovery(
    name=NAME,
    settings=CallRequestedTool,
    stage="answer",
    fixes="an answer before a tool the person's message names was called: sent back once "
    'per such tool for that call (tool_choice "required")',
    effect="local Qwen2.5-Coder, all, 5 trials: happy_path_parallel 0/5 -> 5/5, "
    "tool_error_recovery 0/5 -> 5/5",
    judge=judge,
    patch_id=PATCH_ID,
    legacy=Legacy(switch="call_requested_tool", fields={"call_requested_tool_text": "text"}),
)
