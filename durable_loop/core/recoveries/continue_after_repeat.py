"""``continue_after_repeat``: when the repeated-call guard answers a repeat while the
person's request still gives a value no call carried (``core/request_left``: a number, an
item of a list), the tools come back once with the request quoted and a request for the
next call, before ``finalize_after_repeat`` would ask for the answer.

The local model returns one call per reply. Asked for two songs, two cases or two cities,
it makes the first call, then repeats it; finalizing there answers half the request
(BFCL ``parallel``: "Wrong number of functions" in most of its failures). The repeat says
the model did not see what is left, and the labels say something is. A second repeat is
answered by ``finalize_after_repeat`` as before. Step words and subjects alone do not
count: they err towards "left" by design (``finalize_when_done`` keeps the tools for
them), and here a wrong "left" would cost a call nobody asked for. Names alone do not
count either, nor does the repeat of a made-up tool (patch
``continue-after-repeat-narrowed``; see :func:`_narrowed_out`).
"""

from __future__ import annotations

from pydantic import Field

from durable_loop.core.recoveries.base import (
    Action,
    Event,
    MessageFacts,
    Recovery,
    RecoverySettings,
)

NAME = "continue_after_repeat"
PATCH_ID = "continue-after-repeat"
NARROWED_PATCH_ID = "continue-after-repeat-narrowed"
VALUE_LABELS = frozenset({"number", "list item"})
"""The labels of a value the request gives that no call carried and that asks for a call
of its own: a number, an item of a list."""
NAME_LABEL = "name"
"""A capitalised or quoted word no call held, while another one was. Before patch
``continue-after-repeat-narrowed`` it brought the tools back too; on BFCL's single-call
categories it lost three entries, where the model answered with a call nobody asked for
(docs/evals.md)."""
DEFAULT_TEXT = (
    'That call was already made; its result is above. My request was: "{request}" '
    "Part of it has no call yet. Make the next call it needs, with values from my request "
    "that no call has used, then answer."
)


class ContinueAfterRepeat(RecoverySettings):
    text: str = Field(
        default=DEFAULT_TEXT, description="Template with {request} (the person's message)"
    )


def judge(settings: ContinueAfterRepeat, event: Event, facts: MessageFacts) -> Action | None:
    left = set(event.request_left or ())
    if (
        not left & (VALUE_LABELS | {NAME_LABEL})
        or not facts.request_text
        or facts.used(NAME)
        or (_narrowed_out(event, left) and facts.patched(NARROWED_PATCH_ID))
        or not facts.patched(PATCH_ID)
    ):
        return None
    return Action(prompt=settings.text.format(request=facts.quoted_request()), tools_off=False)


def _narrowed_out(event: Event, left: set[str]) -> bool:
    """What patch ``continue-after-repeat-narrowed`` leaves to ``finalize_after_repeat``:
    a name left with no number or list item, and the repeat of a tool that does not exist
    (the repeat guard withdraws the tools so that a made-up tool is not called over and
    over; bringing them back would undo it)."""
    return event.made_up_repeat or left.isdisjoint(VALUE_LABELS)


RECOVERY = Recovery(
    name=NAME,
    settings=ContinueAfterRepeat,
    stage="repeat",
    fixes="a repeat while the request still gives a value no call carried (a number, a "
    "list item): the tools come back once, with the request quoted and the next call "
    "asked for, before finalize_after_repeat would ask for the answer; since "
    "continue-after-repeat-narrowed, a name alone or a made-up tool's repeat is left to it",
    effect="local Qwen2.5-Coder, BFCL 50 each (seed 1), narrowed: parallel 26/50 -> 28/50 "
    "(no entry lost, fired in 10), simple_python 44/50 and multiple 42/50 with the same "
    "failures as without it (fired in 6 and 5); the first version, which also fired on "
    "names, lost 3 single-call entries; everyday + smoke: did not fire",
    judge=judge,
    patch_id=PATCH_ID,
    reads_request_left=True,
)
