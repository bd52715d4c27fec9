"""The final reply must be an answer: a tool call written as text never completes a message.

Always on (behind the ``reply-not-a-text-call`` patch): when the model's final reply is
nothing but a call of a registered tool written as text, the message does not complete
with that text. With the named recovery ``finalize_text_call_reply``
(``RuntimeConfig.finalize_text_call_reply``) the loop first sends one finalization
request without tools, quoting the recorded tool results and asking for a sentence; if
that reply is a text call again (or the recovery is off) the message fails with
``REPLY_NOT_AN_ANSWER``. Deterministic workflow code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from durable_loop.core.config import RuntimeConfig
    from durable_loop.core.errors import CodedError, ErrorCode
    from durable_loop.core.reply_check import not_an_answer_message, results_digest, text_call_of

PATCH_ID = "reply-not-a-text-call"
FINALIZE_RECOVERY = "finalize_text_call_reply"


@dataclass(frozen=True)
class Verdict:
    action: Literal["finalize", "fail"]
    prompt: str = ""
    error: CodedError | None = None


class ReplyGuard:
    """Remembers what the tools returned in this message and judges final replies."""

    def __init__(self, config: RuntimeConfig, registered: set[str]) -> None:
        self.config = config
        self.registered = registered
        self.results: list[tuple[str, str]] = []
        self.finalized = False

    def note(self, tool: str, text: str) -> None:
        self.results.append((tool, text))

    def judge(self, text: str | None) -> Verdict | None:
        """None: ``text`` may end the message. Otherwise finalize once, then fail."""
        call = text_call_of(text, self.registered)
        if call is None or not workflow.patched(PATCH_ID):
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
