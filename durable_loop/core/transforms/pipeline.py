"""The one place transforms are applied: :class:`Outbound` on the way to a provider,
:class:`Inbound` on the way back. The order, for one request:

1. ``tool_result_transforms``: each tool result envelope, serialised into ``content``;
2. ``tool_transforms``: the tool definitions;
3. ``message_transforms``: each wire message, after the adapter built the request;
4. ``response_transforms``: the decoded response body, before the adapter parses it;
5. ``tool_call_transforms``: the parsed tool calls (after id-less calls got their ids).

Outbound has two stages because what is sent must be what the context window measures
and the prompt plan fingerprints: 1-2 shape the canonical tools and transcript before
the plan (:meth:`Outbound.before_plan`), 3 the provider's wire body
(:meth:`Outbound.encode`). Within a point, names apply in the order given (the provider's
normalisation first, see ``defaults``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from pydantic import JsonValue

from durable_loop.core.canonical_json import canonical_dumps
from durable_loop.core.messages import Message
from durable_loop.core.plan import PromptPlan
from durable_loop.core.providers.base import (
    ProviderAdapter,
    ProviderReply,
    ProviderRequest,
    fill_missing_call_ids,
    loads_lenient,
)
from durable_loop.core.tools import ToolSpec
from durable_loop.core.transforms.inbound import InboundContext
from durable_loop.core.transforms.names import TransformSet
from durable_loop.core.transforms.outbound import OutboundContext
from durable_loop.core.transforms.registry import (
    MESSAGE,
    RESPONSE,
    TOOL_CALLS,
    TOOL_RESULTS,
    TOOLS,
)

Body = dict[str, JsonValue]

OUTBOUND_ORDER = ("tool_result_transforms", "tool_transforms", "message_transforms")
INBOUND_ORDER = ("response_transforms", "tool_call_transforms")


@dataclass(frozen=True)
class Outbound:
    transforms: TransformSet = field(default_factory=TransformSet)
    context: OutboundContext = field(default_factory=OutboundContext)

    def before_plan(
        self, tools: list[ToolSpec], transcript: list[Message]
    ) -> tuple[list[ToolSpec], list[Message]]:
        """Tool results rendered for the model and the tool definitions to send."""
        rendered = render_tool_results(self.transforms.tool_result_transforms, transcript)
        tools = transform_tools(self.transforms.tool_transforms, tools, self.context)
        return tools, rendered

    def encode(
        self, adapter: ProviderAdapter, plan: PromptPlan, messages: list[Message]
    ) -> ProviderRequest:
        """The provider's request, its wire messages transformed."""
        request = adapter.build_request(plan, messages)
        names = self.transforms.message_transforms
        if not names:
            return request
        body = transform_wire_messages(names, request.body, adapter.messages_key)
        return request.model_copy(update={"body": body})


@dataclass(frozen=True)
class Inbound:
    context: InboundContext
    transforms: TransformSet = field(default_factory=TransformSet)

    def read(self, adapter: ProviderAdapter, raw: str) -> ProviderReply:
        """Decode, transform the body, parse, give id-less calls ids, transform the calls.
        Raises what the adapter raises for an unreadable or error reply."""
        body = transform_response(
            self.transforms.response_transforms, loads_lenient(raw), self.context
        )
        reply = adapter.parse_response(body, raw)
        message = fill_missing_call_ids(reply.message, self.context.call_id_prefix)
        message = transform_tool_calls(self.transforms.tool_call_transforms, message)
        return reply.model_copy(update={"message": message})


def render_tool_results(names: list[str], messages: list[Message]) -> list[Message]:
    """Serialise tool result envelopes through the transforms into ``content``."""
    if not names:
        return messages
    out: list[Message] = []
    for message in messages:
        if message.role != "tool" or message.envelope is None or message.content is not None:
            out.append(message)
            continue
        body: Body = json.loads(message.envelope.to_content())  # what the model would read
        for name in names:
            body = TOOL_RESULTS[name](body)
        out.append(message.model_copy(update={"content": canonical_dumps(body)}))
    return out


def transform_tools(
    names: list[str], tools: list[ToolSpec], ctx: OutboundContext
) -> list[ToolSpec]:
    for name in names:
        tools = TOOLS[name](tools, ctx)
    return tools


def transform_wire_messages(names: list[str], body: Body, key: str) -> Body:
    wire = body.get(key)
    if not names or not isinstance(wire, list):
        return body
    messages: list[JsonValue] = []
    for item in wire:
        if isinstance(item, dict):
            for name in names:
                item = MESSAGE[name](item)
        messages.append(item)
    return {**body, key: messages}


def transform_response(names: list[str], body: JsonValue, ctx: InboundContext) -> JsonValue:
    if not isinstance(body, dict):
        return body
    for name in names:
        body = RESPONSE[name](body, ctx)
    return body


def transform_tool_calls(names: list[str], message: Message) -> Message:
    if not names or not message.tool_calls:
        return message
    calls = message.tool_calls
    for name in names:
        calls = TOOL_CALLS[name](calls)
    return message.model_copy(update={"tool_calls": calls})
