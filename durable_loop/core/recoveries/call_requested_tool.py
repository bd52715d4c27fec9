"""``call_requested_tool``: a final reply that comes while an offered tool the person's
message names (not after "do not", "without", ...) has not been called in this message
is sent back, once per such tool, asking for that call. A small model that reads "reply
with Done." answers "Done." without the call it was asked for, or makes the first of two
requested calls and stops.

A message that names no tool counts as requesting the tool the conversation gate routed it
to, once it has made some other call: "work out 1260 divided by 3 and then write the
answer down as a note" is routed to ``note_add``, and the model computes, repeats the
calculation and answers without saving. A message that made no call is left to its
answer, and so is one holding any negation ("and don't save it") (patch
``call-routed-tool``), and one whose only calls were of tools nobody offered (patch
``call-routed-tool-after-offered-call``): a model that makes up ``calculate_area`` for a
question the offered tools cannot answer has said no offered tool fits, and a required call
would make it run the one it was routed to anyway (BFCL irrelevance, docs/evals.md). Nor is
one whose words name nothing of the routed tool that its calls have not covered (patch
``call-routed-tool-it-names``, :meth:`Heard.names_tool` over the called tools' names):
"write the answer down as a note" names ``note_add`` after ``calculate``, while "send $50
to Margaret" after ``Payment_1_MakePayment`` names nothing of ``Payment_1_RequestPayment``
(the gate's guess), and requiring that call made BFCL ``live_multiple`` entries fail that
the model's own call had answered (docs/evals.md)."""

from __future__ import annotations

from pydantic import Field

from durable_loop.core.recoveries.base import (
    Action,
    Event,
    Legacy,
    MessageFacts,
    Recovery,
    RecoverySettings,
)
from durable_loop.core.reply_check import negates_anything, requested_tool
from durable_loop.core.said_values import Heard

NAME = "call_requested_tool"
PATCH_ID = "call-requested-tool"
ROUTED_PATCH_ID = "call-routed-tool"
OFFERED_CALL_PATCH_ID = "call-routed-tool-after-offered-call"
NAMED_PATCH_ID = "call-routed-tool-it-names"
DEFAULT_TEXT = (
    "My request asks for {name}, and you have not called it yet. Call {name} now, then "
    "answer the request with its result."
)

ROUTED_TEXT = (
    'My request was: "{request}" It also asks for {name}, and you have not called it yet. '
    "Call {name} now, then answer the request."
)
"""For the gate's tool. Quoting the request is what carries the value into the call: with
DEFAULT_TEXT the packaged model saved "This is a note." instead of the result (docs/evals.md).
A constant, not a setting, so the settings digest of running sessions stays as it was."""


class CallRequestedTool(RecoverySettings):
    text: str = Field(
        default=DEFAULT_TEXT, description="Template with {name} (the tool the message named)"
    )


def judge(settings: CallRequestedTool, event: Event, facts: MessageFacts) -> Action | None:
    asked = facts.marks.setdefault(NAME, set())
    named = requested_tool(facts.request_text, facts.offered, facts.called | asked)
    if named is not None:
        if not facts.patched(PATCH_ID):
            return None
        name, prompt = named, settings.text.format(name=named)
    else:
        routed = _missed_routed_tool(facts, asked)
        if routed is None:
            return None
        name = routed
        prompt = ROUTED_TEXT.format(request=facts.quoted_request(), name=routed)
    asked.add(name)
    return Action(prompt=prompt, tools_off=False, require_tool_call=True)


def _missed_routed_tool(facts: MessageFacts, asked: set[str]) -> str | None:
    """The gate's tool, when the message made other calls of offered tools but not it,
    negates nothing and names the routed tool's subject in words those calls do not."""
    routed = facts.routed_tool
    if (
        routed is None
        or not facts.request_text
        or routed not in facts.offered
        or not facts.called
        or routed in facts.called | asked
        or negates_anything(facts.request_text)
    ):
        return None
    if facts.called.isdisjoint(facts.offered) and facts.patched(OFFERED_CALL_PATCH_ID):
        return None
    named = Heard([], asked=[facts.request_text]).names_tool(routed, facts.called)
    if not named and facts.patched(NAMED_PATCH_ID):
        return None
    return routed if facts.patched(ROUTED_PATCH_ID) else None


RECOVERY = Recovery(
    name=NAME,
    settings=CallRequestedTool,
    stage="answer",
    fixes="an answer before a tool the person's message names was called, or (after another "
    "call) the tool the conversation gate routed it to: sent back once per such tool for "
    'that call (tool_choice "required"; the gate\'s tool under patch `call-routed-tool`, '
    "only after a call of an offered tool, and only when the message names it in words the "
    "calls made do not: patch `call-routed-tool-it-names`)",
    effect="local Qwen2.5-Coder, all, 5 trials: happy_path_parallel 0/5 -> 5/5, "
    "tool_error_recovery 0/5 -> 5/5; the gate's tool, everyday: compound rent_share "
    "0/1 -> 1/1, tool scenarios 11/17 -> 12/17; only when named: BFCL live_multiple "
    "24/50 -> 29/50, everyday tool scenarios 85/90 as before",
    judge=judge,
    patch_id=PATCH_ID,
    legacy=Legacy(switch="call_requested_tool", fields={"call_requested_tool_text": "text"}),
)
