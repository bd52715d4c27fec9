"""The final reply must be an answer: a tool call written as text never completes a message.

Always on (behind the ``reply-not-a-text-call`` patch): when the model's final reply is
nothing but a call of a registered tool written as text, the message does not complete
with that text. With the named recovery ``finalize_text_call_reply``
(``RuntimeConfig.finalize_text_call_reply``) the loop first sends one finalization
request without tools, quoting the recorded tool results and asking for a sentence; if
that reply is a text call again (or the recovery is off) the message fails with
``REPLY_NOT_AN_ANSWER``.

The named recovery ``call_referred_tool`` handles the other non-answer: a reply telling
the user to use a tool (`` `note_list` function``) the model did not call. It sends the
model back once with a request for that call (tool_choice "required"). Deterministic
workflow code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from durable_loop.core.config import RuntimeConfig
    from durable_loop.core.errors import CodedError, ErrorCode
    from durable_loop.core.reply_check import (
        not_an_answer_message,
        referred_tool,
        results_digest,
        text_call_of,
    )

PATCH_ID = "reply-not-a-text-call"
FINALIZE_RECOVERY = "finalize_text_call_reply"
REFERRAL_RECOVERY = "call_referred_tool"


@dataclass(frozen=True)
class Verdict:
    action: Literal["finalize", "fail", "call_tool"]
    prompt: str = ""
    error: CodedError | None = None


class ReplyGuard:
    """Remembers what the tools returned in this message and judges final replies."""

    def __init__(self, config: RuntimeConfig, registered: set[str]) -> None:
        self.config = config
        self.registered = registered
        self.results: list[tuple[str, str]] = []
        self.finalized = False
        self.referral_used = False
        self.called: set[str] = set()

    def note(self, tool: str, text: str) -> None:
        self.results.append((tool, text))
        self.called.add(tool)

    def judge(self, text: str | None, offered: list[str]) -> Verdict | None:
        """None: ``text`` may end the message. A text call: finalize once, then fail. A
        reply naming one of the ``offered`` tools it did not call: ask for the call once."""
        call = text_call_of(text, self.registered)
        if call is None:
            return self._referral(text, offered)
        if not workflow.patched(PATCH_ID):
            return None
        if self.config.finalize_text_call_reply and not self.finalized:
            self.finalized = True
            prompt = self.config.finalize_text_call_reply_text.format(
                results=results_digest(self.results)
            )
            return Verdict(action="finalize", prompt=prompt)
        error = CodedError(
            code=ErrorCode.REPLY_NOT_AN_ANSWER,
            message=not_an_answer_message(call, recovered=self.finalized),
        )
        return Verdict(action="fail", error=error)

    def _referral(self, text: str | None, offered: list[str]) -> Verdict | None:
        if not self.config.call_referred_tool or self.referral_used:
            return None
        name = referred_tool(text, offered, self.called)
        if name is None or not workflow.patched(PATCH_ID):
            return None
        self.referral_used = True
        prompt = self.config.call_referred_tool_text.format(name=name)
        return Verdict(action="call_tool", prompt=prompt)
