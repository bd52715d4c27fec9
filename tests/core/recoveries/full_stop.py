"""An application's own recovery, registered the way docs/recoveries.md shows: a final
answer that does not end with a full stop is sent back once."""

from __future__ import annotations

from durable_loop.core.recoveries import (
    Action,
    Event,
    MessageFacts,
    Recovery,
    RecoverySettings,
)

NAME = "end_with_full_stop"


class EndWithFullStop(RecoverySettings):
    text: str = "End with a full stop."


def judge(settings: EndWithFullStop, event: Event, facts: MessageFacts) -> Action | None:
    if facts.used(NAME) or (event.text or "").rstrip().endswith("."):
        return None
    return Action(prompt=settings.text)


FULL_STOP = Recovery(
    name=NAME,
    settings=EndWithFullStop,
    stage="answer",
    fixes="an answer without a full stop",
    effect="a test",
    judge=judge,
)
