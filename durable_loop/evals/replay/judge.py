"""The optional judge of a replay: a model asked, with a short fixed prompt, whether the
replay's final answer says the same as the original's. Its verdict (same, different or
unsure) stands beside the exact match; a reply it cannot read is ``unsure``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal

import httpx

from durable_loop.activities.chat import chat_once
from durable_loop.activities.gateway import LlmGateway
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.messages import Message

Verdict = Literal["same", "different", "unsure"]

JUDGE_PROMPT = (
    "You compare two answers to the same user message. Reply with one word: SAME if "
    "they say the same thing (wording may differ), DIFFERENT if they do not, UNSURE if "
    "you cannot tell."
)


VERDICTS: dict[str, Verdict] = {"same": "same", "different": "different", "unsure": "unsure"}


def verdict_of(text: str) -> Verdict:
    """The first of the reply's first three words that is a verdict, else unsure."""
    for word in re.findall(r"[a-z]+", text.lower())[:3]:
        if word in VERDICTS:
            return VERDICTS[word]
    return "unsure"


class Judge:
    def __init__(
        self, endpoint: LlmEndpoint, http: httpx.AsyncClient, environ: Mapping[str, str]
    ) -> None:
        self.endpoint = endpoint
        self.gateway = LlmGateway(http, environ)

    async def verdict(self, question: str, original: str | None, replay: str | None) -> Verdict:
        if original is None or replay is None:
            return "unsure"
        asked = (
            f"User message:\n{question}\n\nAnswer A:\n{original}\n\nAnswer B:\n{replay}\n\n"
            "Do A and B say the same? One word: SAME, DIFFERENT or UNSURE."
        )
        messages = [
            Message(role="system", content=JUDGE_PROMPT),
            Message(role="user", content=asked),
        ]
        reply = await chat_once(self.gateway, self.endpoint, messages, {"temperature": 0})
        return verdict_of(reply.text)
