"""``call_referred_tool``: a final reply telling the user to use a tool (named in code
form) that was not called in this message is sent back once, asking for that call.

Not after a message whose only calls were of tools nobody offered (patch
``call-referred-tool-after-offered-call``): a made-up tool is the model saying no offered
tool fits, and the loop's note after it lists every offered tool, which the model then
repeats to the person. Required, that call ran anyway: BFCL ``irrelevance_97`` ("recommend
a Chinese restaurant in New York", only ``file_lawsuit`` offered) filed a lawsuit
(docs/evals.md). The same reading as ``call_requested_tool``'s
``call-routed-tool-after-offered-call``."""

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
from durable_loop.core.reply_check import TEXT_CALL_PATCH_ID, referred_tool

NAME = "call_referred_tool"
OFFERED_CALL_PATCH_ID = "call-referred-tool-after-offered-call"
DEFAULT_TEXT = (
    "Do not tell the user to use {name}: you can call it yourself. Call {name} now, then "
    "answer the request with its result."
)


class CallReferredTool(RecoverySettings):
    text: str = Field(default=DEFAULT_TEXT, description="Template with {name} (the tool)")


def judge(settings: CallReferredTool, event: Event, facts: MessageFacts) -> Action | None:
    if facts.used(NAME):
        return None
    name = referred_tool(event.text, facts.offered, facts.called)
    if name is None or not facts.patched(TEXT_CALL_PATCH_ID):
        return None
    if (
        facts.called
        and facts.called.isdisjoint(facts.offered)
        and facts.patched(OFFERED_CALL_PATCH_ID)
    ):
        return None
    return Action(prompt=settings.text.format(name=name), tools_off=False, require_tool_call=True)


RECOVERY = Recovery(
    name=NAME,
    settings=CallReferredTool,
    stage="answer",
    fixes='a reply telling the user to use a tool ("the `note_list` function") it did not '
    'call: sent back once for that call (tool_choice "required"); not after calls of '
    "made-up tools only, since `call-referred-tool-after-offered-call`",
    effect="scripted behaviour names_the_tool: fails without it, passes with it; local "
    "production, 1,235 BFCL and everyday sessions: fired once, after a made-up tool (BFCL "
    "irrelevance_97, a lawsuit for a restaurant question), which the patch leaves answered",
    judge=judge,
    patch_id=TEXT_CALL_PATCH_ID,
    legacy=Legacy(switch="call_referred_tool", fields={"call_referred_tool_text": "text"}),
)
