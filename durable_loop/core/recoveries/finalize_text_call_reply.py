"""``finalize_text_call_reply``: a final reply the answer check refused (a tool call
written as text, a reply without words, a cut-off JSON call; see core/reply_check) gets
one request without tools quoting the recorded results, before REPLY_NOT_AN_ANSWER."""

from __future__ import annotations

from pydantic import Field

from durable_loop.core.errors import ErrorCode
from durable_loop.core.recoveries.base import (
    Action,
    Event,
    Legacy,
    MessageFacts,
    Recovery,
    RecoverySettings,
)
from durable_loop.core.reply_check import TEXT_CALL_PATCH_ID

NAME = "finalize_text_call_reply"
DEFAULT_TEXT = (
    "Your last reply was a tool call written as text, not an answer for the user. No more "
    "tools will run. The tool results so far:\n{results}\n"
    "Answer the user's request now in one or two plain sentences, using these results. "
    "Do not write JSON, code or a function call."
)


class FinalizeTextCallReply(RecoverySettings):
    text: str = Field(
        default=DEFAULT_TEXT,
        description="Template with {results} (one line per recorded tool result)",
    )


def judge(settings: FinalizeTextCallReply, event: Event, facts: MessageFacts) -> Action | None:
    failure = event.failure
    if failure is None or failure.code != ErrorCode.REPLY_NOT_AN_ANSWER or facts.used(NAME):
        return None
    return Action(prompt=settings.text.format(results=facts.results_digest()), tools_off=True)


RECOVERY = Recovery(
    name=NAME,
    settings=FinalizeTextCallReply,
    stage="failure",
    fixes="a final reply that is only a tool call written as text (or no words, a "
    "cut-off JSON call, or a call of a tool that does not exist): one request without "
    "tools quoting the recorded results",
    effect="local Qwen2.5-Coder, everyday: arithmetic, quote_result, save_then_list 0/1 -> 1/1",
    judge=judge,
    patch_id=TEXT_CALL_PATCH_ID,
    legacy=Legacy(
        switch="finalize_text_call_reply", fields={"finalize_text_call_reply_text": "text"}
    ),
)
