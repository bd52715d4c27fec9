"""The conversation gate's activity: one short request (no tools) asking whether the
person's message asks for a tool (core/conversation_gate)."""

from __future__ import annotations

from temporalio import activity

from durable_loop.activities.chat import chat_once
from durable_loop.activities.gateway import LlmGateway
from durable_loop.activities.heartbeat import heartbeating
from durable_loop.activities.question import read_context
from durable_loop.core import names
from durable_loop.core.conversation_gate import (
    ConversationGateInput,
    ConversationGateOutput,
    gate_messages,
    is_conversation,
    routed_tool,
)
from durable_loop.store import TranscriptStore

ANSWER_CHARS = 200


class ConversationGateActivities:
    def __init__(self, store: TranscriptStore, gateway: LlmGateway) -> None:
        self.store = store
        self.gateway = gateway

    @activity.defn(name=names.CONVERSATION_GATE)
    async def conversation_gate(self, inp: ConversationGateInput) -> ConversationGateOutput:
        context = await read_context(self.store, inp.session_id, inp.user_seq, inp.context_messages)
        messages = gate_messages(inp.question, inp.tools, inp.examples, context)
        async with heartbeating("conversation gate"):
            reply = await chat_once(
                self.gateway, inp.endpoint, messages, inp.options, session_id=inp.session_id
            )
        offered = [t.name for t in inp.tools]
        return ConversationGateOutput(
            conversation=is_conversation(reply.text, offered),
            answer=reply.text[:ANSWER_CHARS],
            routed_tool=routed_tool(reply.text, offered),
            latency_ms=reply.latency_ms,
            usage=reply.usage,
        )
