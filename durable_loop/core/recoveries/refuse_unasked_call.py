"""``refuse_unasked_call``: once a call of an offered tool has run in a message, a call of
another tool, not yet called in it, whose required values nobody gave is not executed
(ARGUMENTS_NOT_GIVEN); the tools are withdrawn and the finalization request follows, as
after a repeat.

A small model that has made the call it was asked for goes on to the other tools it was
offered, filling them with values of its own: asked for lawyers in New York, it then rents
a sedan and a truck there; asked for the area of a circle, it plots a sine wave from 0 to
20. Such a call is a side effect nobody asked for, and on BFCL ``multiple`` the count of
executed calls comes out wrong (docs/evals.md). What "nobody gave" means is
``core/said_values``: a required value with digits nobody wrote, or a text none of whose
words the conversation (system prompt, the person's messages, tool results) used, of a
tool the person's messages do not name (a named tool's values may be knowledge: "more than
5 players" is 6). The LLM activity, which holds the arguments, names such arguments in
``ToolCallSummary.args_unsaid``; this module decides from those names alone (carried out by
core/guards and the loop).

A follow-up call whose values come from a tool result ("work out 1260 / 3 and save the
answer as a note": ``note_add`` with 420) is said, and runs.
"""

from __future__ import annotations

from pydantic import Field

from durable_loop.core.recoveries.base import Action, MessageFacts, Recovery, RecoverySettings

NAME = "refuse_unasked_call"
PATCH_ID = "refuse-unasked-call"
DEFAULT_TEXT = (
    "No more tools will run. The tool results so far:\n{results}\n"
    "Answer my request now in one or two plain sentences, using these results. "
    "Do not write JSON, code or a function call."
)
"""Names neither the refused call nor its refusal: told "car_rental was not called", the
packaged model answered about car_rental instead of the request."""


class RefuseUnaskedCall(RecoverySettings):
    text: str = Field(
        default=DEFAULT_TEXT,
        description="Template with {results} (one line per recorded result of the tools "
        "that ran), and {tool} and {arguments} (the refused call, the values nobody gave)",
    )


def unasked(tool: str, unsaid: list[str], called: set[str]) -> bool:
    """Whether a call of ``tool`` whose required ``unsaid`` values nobody gave comes after
    another tool's call in this message (``called``: the tools called so far)."""
    return bool(unsaid) and bool(called) and tool not in called


def refusal_message(tool: str, unsaid: list[str]) -> str:
    return (
        f"not executed: no one gave the values of {', '.join(unsaid)}; "
        f"{tool} was not asked for (recovery {NAME})"
    )


def finalization(
    settings: RefuseUnaskedCall, tool: str, unsaid: list[str], facts: MessageFacts
) -> Action:
    """The finalization request after the refused call (tools withdrawn)."""
    return Action(
        prompt=settings.text.format(
            tool=tool, arguments=", ".join(unsaid), results=facts.results_digest(leave_out=tool)
        ),
        tools_off=True,
    )


RECOVERY = Recovery(
    name=NAME,
    settings=RefuseUnaskedCall,
    stage="call",
    fixes="after a call of an offered tool ran, a call of another tool with required values "
    "nobody gave (ARGUMENTS_NOT_GIVEN): not executed, tools withdrawn, the finalization "
    "request follows",
    effect="local Qwen2.5-Coder, BFCL multiple (50, seed 1): production 38/50 -> 43/50 (it "
    "fired 7 times, all passes; 7 of 8 wrong-count failures gone); everyday and smoke "
    "unchanged (18/21 tool scenarios; it did not fire)",
    patch_id=PATCH_ID,
)
