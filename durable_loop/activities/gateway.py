"""The LLM gateway: the one path from an endpoint, a prompt plan and messages to a parsed
provider reply, shared by the loop's LLM turn, the summary step and the router pipeline.

Adapter lookup, the API key (read from the worker's environment, never from history),
encoding (the outbound transforms' wire stage), the HTTP exchange (``provider_http`` or,
streamed, ``llm_stream``) and reading the reply (the inbound transforms) happen here once;
every failure on the way is a coded ``ApplicationError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import httpx

from durable_loop.activities.llm_stream import ChunkWriter, post_streaming
from durable_loop.activities.provider_http import adapter_for, post, read_api_key, read_reply
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.messages import Message
from durable_loop.core.plan import PromptPlan
from durable_loop.core.providers import ProviderReply
from durable_loop.core.providers.openai_stream import STREAMING_PROVIDERS, streaming_request
from durable_loop.core.transforms.inbound import InboundContext
from durable_loop.core.transforms.names import TransformSet
from durable_loop.core.transforms.pipeline import Inbound, Outbound

NO_TRANSFORMS = TransformSet()


@dataclass(frozen=True)
class GatewayReply:
    reply: ProviderReply
    latency_ms: int
    streamed: bool
    """The text arrived as a stream (written to the ``stream_chunks`` table as it came)."""


class LlmGateway:
    """Holds the worker's pooled HTTP client and its environment (for API keys)."""

    def __init__(self, http: httpx.AsyncClient, environ: Mapping[str, str]) -> None:
        self.http = http
        self.environ = environ

    async def complete(
        self,
        endpoint: LlmEndpoint,
        plan: PromptPlan,
        messages: list[Message],
        *,
        call_id_prefix: str,
        transforms: TransformSet = NO_TRANSFORMS,
        stream: ChunkWriter | None = None,
    ) -> GatewayReply:
        """Send ``messages`` as ``plan`` says and parse the reply.

        ``transforms``: the outbound pipeline's wire stage and the whole inbound pipeline
        apply here (its stage before the plan is the request builder's, ``plan_turn``).
        ``call_id_prefix``: for tool call ids made up while parsing. ``stream``: where text
        deltas go when the endpoint's provider can stream; otherwise the request is plain.
        """
        adapter = adapter_for(endpoint)
        api_key = read_api_key(self.environ, endpoint.api_key_env)
        request = Outbound(transforms).encode(adapter, plan, messages)
        if stream is not None and endpoint.provider in STREAMING_PROVIDERS:
            streamed = True
            raw, latency_ms = await post_streaming(
                self.http, endpoint, adapter, streaming_request(request), api_key, stream
            )
        else:
            streamed = False
            raw, latency_ms = await post(self.http, endpoint, adapter, request, api_key)
        context = InboundContext(
            call_id_prefix=call_id_prefix, tool_names=[t.name for t in plan.tools]
        )
        reply = read_reply(adapter, endpoint, raw, api_key, Inbound(context, transforms))
        return GatewayReply(reply=reply, latency_ms=latency_ms, streamed=streamed)
