"""One plain chat request (no tools) through the LLM gateway.

Used by the router pipeline's activities and by the routing benchmark, which send the same
prompts to the same endpoints. The HTTP exchange and its coded failures are the gateway's:
408/409/429/5xx and timeouts retry, the rest do not.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import JsonValue

from durable_loop.activities.gateway import LlmGateway
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.messages import Message, Usage
from durable_loop.core.plan import PromptPlan


@dataclass(frozen=True)
class ChatReply:
    text: str
    usage: Usage
    latency_ms: int


async def chat_once(
    gateway: LlmGateway,
    endpoint: LlmEndpoint,
    messages: list[Message],
    options: dict[str, JsonValue] | None = None,
    *,
    session_id: str = "",
) -> ChatReply:
    plan = PromptPlan(
        model=endpoint.model, session_id=session_id, upto_seq=0, llm_options=options or {}
    )
    done = await gateway.complete(endpoint, plan, messages, call_id_prefix="router")
    reply = done.reply
    return ChatReply(
        text=reply.message.content or "", usage=reply.usage, latency_ms=done.latency_ms
    )
