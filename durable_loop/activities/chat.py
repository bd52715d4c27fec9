"""One plain chat request (no tools) through a provider adapter.

Used by the router pipeline's activities and by the routing benchmark, which send the same
prompts to the same endpoints. The HTTP exchange and its coded failures are the LLM
activity's (``provider_http``): 408/409/429/5xx and timeouts retry, the rest do not.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import httpx
from pydantic import JsonValue

from durable_loop.activities.provider_http import adapter_for, post, read_api_key, read_reply
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.messages import Message, Usage
from durable_loop.core.plan import PromptPlan
from durable_loop.core.transforms.inbound import InboundContext


@dataclass(frozen=True)
class ChatReply:
    text: str
    usage: Usage
    latency_ms: int


async def chat_once(
    http: httpx.AsyncClient,
    environ: Mapping[str, str],
    endpoint: LlmEndpoint,
    messages: list[Message],
    options: dict[str, JsonValue] | None = None,
    *,
    session_id: str = "",
) -> ChatReply:
    adapter = adapter_for(endpoint)
    api_key = read_api_key(environ, endpoint.api_key_env)
    plan = PromptPlan(
        model=endpoint.model, session_id=session_id, upto_seq=0, llm_options=options or {}
    )
    request = adapter.build_request(plan, messages)
    raw, latency_ms = await post(http, endpoint, adapter, request, api_key)
    reply = read_reply(
        adapter,
        endpoint,
        raw,
        api_key,
        response_transforms=[],
        context=InboundContext(call_id_prefix="router", tool_names=[]),
    )
    return ChatReply(text=reply.message.content or "", usage=reply.usage, latency_ms=latency_ms)
