"""``withhold_tools_from_conversation``: before a person's message is sent with tools, the
conversation gate (core/conversation_gate) asks whether it asks for a tool at all; on
``none`` the message's turns go without tools (carried out by workflows/conversation_gate).
"""

from __future__ import annotations

from pydantic import Field

from durable_loop.core.recoveries.base import Recovery, RecoverySettings

NAME = "withhold_tools_from_conversation"
DEFAULT_EXAMPLES = (
    "Hi!",
    "Thanks a lot.",
    "Bye!",
    "What are you?",
    "Well done.",
    "Is this thing on?",
)
"""None of them is one of the everyday eval's no-request messages."""


class WithholdToolsFromConversation(RecoverySettings):
    examples: list[str] = Field(
        default_factory=lambda: list(DEFAULT_EXAMPLES),
        description="Conversation turns shown answered none before the message",
    )


RECOVERY = Recovery(
    name=NAME,
    settings=WithholdToolsFromConversation,
    stage="message",
    fixes="a tool call on a message that asks for none (thanks, greetings, questions about "
    "the assistant): one short request (tool names or none) before the first turn; on none "
    "the message's turns go without tools",
    effect="local Qwen2.5-Coder, 22 no-request messages: gate said a tool for 0 (tools "
    "offered: 15 of 21 made a call); 26 tool requests: gate said none for 0",
)
