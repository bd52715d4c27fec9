"""What the models of the all-features session answer, message by message.

Each model's reply is chosen by the user message it answers (the last one of the request
whose text is a message of the story) and by how many assistant turns followed it, so the
primary model and its fallback read the same script: which of them answers a turn (the
primary's endpoint fails one message; its circuit breaker then skips it for a while) does
not change what is said.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from durable_loop.testing import reply
from durable_loop.testing.scripted import RecordedRequest, Reply

SLOW_S = 30.0
"""A reply that would take this long: far beyond the cancel or interrupt that stops it."""

CHILD_USAGE = {"prompt_tokens": 40, "completion_tokens": 10, "total_tokens": 50}
"""The sub-agent's turns cost more than the parent's (15), so its share of the total shows."""

CITY = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
    "required": ["city", "population"],
}
RENAME = [{"op": "replace", "path": "/title", "value": "New"}]


@dataclass(frozen=True)
class Message:
    """One user message of the story: its id, its text and what the models answer."""

    message_id: str
    text: str
    replies: tuple[Reply, ...] = ()


PAY = Message(
    "m1-pay",
    "Pay acme 250, bob 90 and eve 5; look acme up first.",
    (
        reply.tool_calls(
            ("lookup", {"query": "acme"}, "c0"),
            ("pay", {"amount": 250, "to": "acme"}, "c1"),
            ("pay", {"amount": 90, "to": "bob"}, "c2"),
            ("pay", {"amount": 5, "to": "eve"}, "c3"),
        ),
        reply.text("Paid acme 250 and bob 80; the payment to eve was rejected."),
    ),
)
OVER_BUDGET = Message("m2-over", "And one more thing.")
PROPOSE = Message(
    "m3-propose",
    "Rename the title to New.",
    (
        reply.tool_call("facts_propose", {"changes": RENAME, "summary": "rename"}, "p1"),
        reply.text("I proposed the new title."),
    ),
)
TYPED = Message(
    "m4-typed",
    "Which city is the capital of France, and how many live there?",
    (
        reply.text('{"city": "Paris"}'),
        reply.text('{"city": "Paris", "population": 2100000}'),
    ),
)
FALLBACK = Message("m5-fallback", "Say hello.", (reply.text("Hello from the backup."),))
CANCELLED = Message(
    "m6-cancelled", "Write a very long story.", (reply.slow(reply.text("too late"), SLOW_S),)
)
INTERRUPTED = Message(
    "m7-interrupted", "Write another long story.", (reply.slow(reply.text("late"), SLOW_S),)
)
STEERED = Message("m8-steered", "Never mind, just say hi.", (reply.text("Hi."),))
DELEGATE = Message(
    "m9-delegate",
    "Ask the researcher to pay acme 5.",
    (
        reply.tool_call("researcher", {"task": "pay acme 5"}, "r1"),
        reply.text("The researcher paid acme 5."),
    ),
)
EXPIRES = Message(
    "m10-expires",
    "Pay zed 7.",
    (reply.tool_call("pay", {"amount": 7, "to": "zed"}, "c10"), reply.text("It expired.")),
)
STORY = (
    PAY,
    OVER_BUDGET,
    PROPOSE,
    TYPED,
    FALLBACK,
    CANCELLED,
    INTERRUPTED,
    STEERED,
    DELEGATE,
    EXPIRES,
)
CHILD_REPLIES = (
    reply.tool_call("pay", {"amount": 5, "to": "acme"}, "c9"),
    reply.text("paid acme 5"),
)


def with_usage(answer: Reply, usage: dict[str, int]) -> Reply:
    body = dict(answer.body)
    body["usage"] = usage
    return Reply(status=answer.status, body=body)


@dataclass
class Play:
    """The replies of the session's models (see the module docstring)."""

    messages: tuple[Message, ...] = STORY
    primary_fails_on: str = FALLBACK.text
    unscripted: list[str] = field(default_factory=list)

    def _position(self, request: RecordedRequest) -> tuple[Message | None, int]:
        by_text = {m.text: m for m in self.messages}
        answered = 0
        for sent in reversed(request.messages):
            if sent.get("role") == "assistant":
                answered += 1
            elif sent.get("role") == "user" and sent.get("content") in by_text:
                return by_text[sent["content"]], answered
        return None, 0

    def answer(self, request: RecordedRequest) -> Reply:
        message, answered = self._position(request)
        if message is None or answered >= len(message.replies):
            said = message.message_id if message else "no message of the story"
            self.unscripted.append(f"{request.model}: {said}, turn {answered + 1}")
            return reply.error(400, f"all-features script: nothing left for {said}")
        return message.replies[answered]

    def primary(self, request: RecordedRequest) -> Reply:
        """The primary's endpoint is down for one message (every attempt answers 503)."""
        message, _ = self._position(request)
        if message is not None and message.text == self.primary_fails_on:
            return reply.error(503, "the primary endpoint is down")
        return self.answer(request)


def child_replies() -> list[Reply]:
    return [with_usage(r, CHILD_USAGE) for r in CHILD_REPLIES]
