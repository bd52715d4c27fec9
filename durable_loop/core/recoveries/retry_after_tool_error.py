"""``retry_after_tool_error``: send a model that answered right after a failed call back.

Small models read an error and declare success anyway, so the loop quotes the error and
asks for a corrected call (tool_choice "required"). Two failures are not sent back that
way:

* A failure no corrected call can fix (``FINAL_FAILURE_CODES``: the request has no
  result, a person rejected the call, its approval expired): the model's reply, which
  should tell the person so, is the answer (behind the ``error-retry-skips-final-failures``
  patch, asked only when such a failure is the last one).
* A call to a tool that was never offered: the model is told which tools exist and that
  it may answer directly. If the person's message names that tool, they asked for a tool
  action and the retry still requires a call; if the model invented it (``say_hello``
  for a greeting) the request may need no tool at all, and a required call would make
  the model run a real one (a ``note_add`` of the greeting, seen on the local 1.5B), so
  the model keeps its usual tool choice. The loop issues the same commands either way,
  so this needs no patch.
"""

from __future__ import annotations

import re

from pydantic import Field

from durable_loop.core.errors import FINAL_FAILURE_CODES, ErrorCode
from durable_loop.core.recoveries.base import (
    Action,
    Event,
    Legacy,
    MessageFacts,
    Recovery,
    RecoverySettings,
)

NAME = "retry_after_tool_error"
FINAL_FAILURES_PATCH_ID = "error-retry-skips-final-failures"
DEFAULT_TEXT = (
    "Your {name} call failed: {error} "
    "The task is not done. Call {name} again with corrected arguments, then answer."
)
UNKNOWN_TOOL_TEXT = (
    "There is no tool named {name}. The tools you have are: {tools}. If one of them does "
    "what the user asked, call it; if the request needs no tool, answer the user directly."
)


class RetryAfterToolError(RecoverySettings):
    attempts: int = Field(default=2, ge=1, description="Retries per message, at most")
    text: str = Field(
        default=DEFAULT_TEXT,
        description="Template with {name} (the tool) and {error} (its first error message)",
    )


def judge(settings: RetryAfterToolError, event: Event, facts: MessageFacts) -> Action | None:
    last = facts.last_failure
    if last is None or facts.used(NAME) >= settings.attempts or not facts.offered:
        return None
    if FINAL_FAILURE_CODES.intersection(last.codes) and facts.patched(FINAL_FAILURES_PATCH_ID):
        return None
    if ErrorCode.TOOL_NOT_FOUND in last.codes and last.tool not in facts.offered:
        prompt = UNKNOWN_TOOL_TEXT.format(name=last.tool, tools=", ".join(facts.offered))
        facts.last_failure = None  # a direct answer after this is the answer
        return Action(prompt=prompt, tools_off=False, require_tool_call=_named(last.tool, facts))
    prompt = settings.text.format(name=last.tool, error=last.text)
    return Action(prompt=prompt, tools_off=False, require_tool_call=True)


def _named(tool: str, facts: MessageFacts) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(tool)}(?![\w-])", facts.request_text) is not None


RECOVERY = Recovery(
    name=NAME,
    settings=RetryAfterToolError,
    stage="reply",
    fixes="an answer right after a failed call: the error is quoted and a corrected call "
    'asked for (tool_choice "required"), up to attempts times per message',
    effect="scripted behaviour gives_up_after_errors: fails without it, passes with it",
    judge=judge,
    patch_id=FINAL_FAILURES_PATCH_ID,
    reported=False,
    legacy=Legacy(
        switch="retry_after_tool_error",
        counts=True,
        fields={"retry_after_tool_error_text": "text"},
    ),
)
