"""``ask_for_unsaid_values``: the message's first call, of a tool the person did not name,
whose required values nobody gave is not executed (ARGUMENTS_NOT_GIVEN); the tools are
withdrawn and the model is asked to answer in words: from what it knows, or by asking the
person for those values.

Asked something no offered tool serves ("what is the mass of an electron?" with only
``calculate_current`` offered), a small model calls the offered tool anyway and fills it
with values of its own (a voltage of 120, a resistance of 10). Such a call is a side
effect with made-up inputs; its result answers a question nobody asked. Asked for the
weather with no city given, the right move is the question "which city?", not a forecast
for a city the model picked. What "nobody gave" means is ``core/said_values`` (the same
rule as ``refuse_unasked_call``, which covers the calls after the first): a required value
with digits nobody wrote, or a text none of whose words the conversation used, of a tool
the person's messages do not name. The LLM activity names such arguments in
``ToolCallSummary.args_unsaid``; this module decides from those names alone (carried out
by core/guards and the loop).
"""

from __future__ import annotations

from pydantic import Field

from durable_loop.core.recoveries.base import Action, Recovery, RecoverySettings

NAME = "ask_for_unsaid_values"
PATCH_ID = "ask-for-unsaid-values"
DEFAULT_TEXT = (
    "No tool ran: nothing I wrote gives {tool} its {arguments}. Answer my request now in "
    "one or two plain sentences: from what you know, or by asking me for what you need. "
    "Do not write JSON, code or a function call."
)


class AskForUnsaidValues(RecoverySettings):
    text: str = Field(
        default=DEFAULT_TEXT,
        description="Template with {tool} and {arguments} (the refused call and the values "
        "nobody gave)",
    )


def applies(unsaid: list[str], called: set[str]) -> bool:
    """Whether a call whose required ``unsaid`` values nobody gave is the message's first
    (``called``: the tools called so far in it)."""
    return bool(unsaid) and not called


def refusal_message(tool: str, unsaid: list[str]) -> str:
    return (
        f"not executed: no one gave the values of {', '.join(unsaid)}; "
        f"ask for them instead of calling {tool} (recovery {NAME})"
    )


def finalization(settings: AskForUnsaidValues, tool: str, unsaid: list[str]) -> Action:
    """The request after the refused call: an answer in words, tools withdrawn."""
    return Action(
        prompt=settings.text.format(tool=tool, arguments=", ".join(unsaid)), tools_off=True
    )


RECOVERY = Recovery(
    name=NAME,
    settings=AskForUnsaidValues,
    stage="call",
    fixes="the message's first call, of a tool the person did not name, with required values "
    "nobody gave (ARGUMENTS_NOT_GIVEN): not executed, tools withdrawn, the model answers in "
    "words or asks for the values",
    effect="local Qwen2.5-Coder, BFCL irrelevance (50, seed 1): production 21/50 -> 33/50 (it "
    "fired 12 times, all passes); simple_python 45/50 -> 44/50 (it fired once: 13 hearts in "
    "a deck is knowledge); everyday and smoke unchanged (it did not fire)",
    patch_id=PATCH_ID,
)
