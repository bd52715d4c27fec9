"""The final reply must be an answer: a tool call written as text never completes a message.

Always on (behind the ``reply-not-a-text-call`` patch): when the model's final reply is
nothing but a call of a registered tool written as text, the message does not complete
with that text. With the named recovery ``finalize_text_call_reply``
(``RuntimeConfig.finalize_text_call_reply``) the loop first sends one finalization
request without tools, quoting the recorded tool results and asking for a sentence; if
that reply is a text call again (or the recovery is off) the message fails with
``REPLY_NOT_AN_ANSWER``.

A non-blank reply without a single letter or digit (``{``: a call cut off as it started)
is no answer either (patch ``reply-without-words``) and is handled the same way, as is a
JSON call of a registered tool cut off by the token limit (``{"name": "state_patch",
"arguments": {...``; patch ``reply-cut-off-call``).

The named recovery ``finalize_after_repeat`` (behind the ``finalize-after-repeat`` patch)
sends that finalization request as soon as the repeated-call guard answers a repeat: a
model that repeats a call after its result (the local Qwen) would otherwise spend one
more turn writing the repeated call as text before being asked for the answer.

The named recovery ``call_referred_tool`` handles the other non-answer: a reply telling
the user to use a tool (`` `note_list` function``) the model did not call. It sends the
model back once with a request for that call (tool_choice "required").

The named recovery ``call_requested_tool`` (patch ``call-requested-tool``) does the same
for a tool the *person's* message names ("read my note with read_note") that the model has
not called when it answers: once per such tool and message. A small model that reads
"reply with Done." answers "Done." without the call it was asked for, or makes the first
of two requested calls and stops. Deterministic workflow code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from durable_loop.core.config import RuntimeConfig
    from durable_loop.core.errors import CodedError, ErrorCode
    from durable_loop.core.reply_check import (
        cut_off_call_message,
        cut_off_call_of,
        has_no_words,
        no_words_message,
        not_an_answer_message,
        referred_tool,
        requested_tool,
        results_digest,
        text_call_of,
    )

PATCH_ID = "reply-not-a-text-call"
REPEAT_PATCH_ID = "finalize-after-repeat"
NO_WORDS_PATCH_ID = "reply-without-words"
CUT_OFF_PATCH_ID = "reply-cut-off-call"
REQUESTED_PATCH_ID = "call-requested-tool"
FINALIZE_RECOVERY = "finalize_text_call_reply"
FINALIZE_REPEAT_RECOVERY = "finalize_after_repeat"
REFERRAL_RECOVERY = "call_referred_tool"
REQUESTED_RECOVERY = "call_requested_tool"


@dataclass(frozen=True)
class Verdict:
    action: Literal["finalize", "fail", "call_tool"]
    prompt: str = ""
    recovery: str = ""
    error: CodedError | None = None


class ReplyGuard:
    """Remembers what the tools returned in this message and judges final replies."""

    def __init__(self, config: RuntimeConfig, registered: set[str]) -> None:
        self.config = config
        self.registered = registered
        self.results: list[tuple[str, str]] = []
        self.finalized = False
        self.referral_used = False
        self.repeat_finalized = False
        self.called: set[str] = set()
        self.requested: set[str] = set()
        self.request_text = ""
        """The person's message (empty for a message resumed after approvals)."""

    def note(self, tool: str, text: str) -> None:
        self.results.append((tool, text))
        self.called.add(tool)

    def judge(self, text: str | None, offered: list[str]) -> Verdict | None:
        """None: ``text`` may end the message. A text call: finalize once, then fail. A
        reply naming one of the ``offered`` tools it did not call, or coming before a tool
        the person's message names was called: ask for the call once."""
        call = text_call_of(text, self.registered)
        if call is None and has_no_words(text) and workflow.patched(NO_WORDS_PATCH_ID):
            return self._not_an_answer(no_words_message(text or "", recovered=self.finalized))
        cut = None if call is not None else cut_off_call_of(text, self.registered)
        if cut is not None and workflow.patched(CUT_OFF_PATCH_ID):
            return self._not_an_answer(cut_off_call_message(cut, recovered=self.finalized))
        if call is None:
            return self._referral(text, offered) or self._requested(offered)
        if not workflow.patched(PATCH_ID):
            return None
        return self._not_an_answer(not_an_answer_message(call, recovered=self.finalized))

    def _not_an_answer(self, message: str) -> Verdict:
        """Finalize once (with the recovery on), then fail with REPLY_NOT_AN_ANSWER."""
        if self.config.finalize_text_call_reply and not self.finalized:
            self.finalized = True
            prompt = self.config.finalize_text_call_reply_text.format(
                results=results_digest(self.results)
            )
            return Verdict(action="finalize", prompt=prompt)
        error = CodedError(code=ErrorCode.REPLY_NOT_AN_ANSWER, message=message)
        return Verdict(action="fail", error=error)

    def after_repeat(self) -> str | None:
        """The finalization request to send right after the repeat guard answered a
        repeat (once per message), or None."""
        if not self.config.finalize_after_repeat or self.repeat_finalized:
            return None
        if not workflow.patched(REPEAT_PATCH_ID):
            return None
        self.repeat_finalized = True
        return self.config.finalize_after_repeat_text.format(results=results_digest(self.results))

    def _referral(self, text: str | None, offered: list[str]) -> Verdict | None:
        if not self.config.call_referred_tool or self.referral_used:
            return None
        name = referred_tool(text, offered, self.called)
        if name is None or not workflow.patched(PATCH_ID):
            return None
        self.referral_used = True
        prompt = self.config.call_referred_tool_text.format(name=name)
        return Verdict(action="call_tool", prompt=prompt, recovery=REFERRAL_RECOVERY)

    def _requested(self, offered: list[str]) -> Verdict | None:
        if not self.config.call_requested_tool:
            return None
        name = requested_tool(self.request_text, offered, self.called | self.requested)
        if name is None or not workflow.patched(REQUESTED_PATCH_ID):
            return None
        self.requested.add(name)
        prompt = self.config.call_requested_tool_text.format(name=name)
        return Verdict(action="call_tool", prompt=prompt, recovery=REQUESTED_RECOVERY)
