"""``fix_empty_final``: an empty final reply after tool results gets one more request."""

from __future__ import annotations

from durable_loop.core.recoveries.base import (
    Action,
    Event,
    Legacy,
    MessageFacts,
    Recovery,
    RecoverySettings,
)

NAME = "fix_empty_final"
DEFAULT_TEXT = (
    "Your last reply was empty. Using the tool results above, write the final answer now."
)


class FixEmptyFinal(RecoverySettings):
    text: str = DEFAULT_TEXT
    disable_tools: bool = True


def judge(settings: FixEmptyFinal, event: Event, facts: MessageFacts) -> Action | None:
    blank = not (event.text or "").strip()
    if not blank or facts.used(NAME) or not event.tool_calls_made:
        return None
    return Action(prompt=settings.text, tools_off=settings.disable_tools)


RECOVERY = Recovery(
    name=NAME,
    settings=FixEmptyFinal,
    stage="reply",
    fixes="an empty final reply after tool results: asked once more for the answer "
    "(tools withdrawn unless disable_tools is false)",
    effect="scripted behaviour empty_finals: fails without it, passes with it (on by default)",
    judge=judge,
    reported=False,
    on_by_default=True,
    legacy=Legacy(
        switch="fix_empty_final",
        fields={
            "fix_empty_final_user_text": "text",
            "fix_empty_final_disable_tools": "disable_tools",
        },
    ),
)
