"""Transform names -> functions, and the functions the LLM activity calls at each point.

Application points, in request order:

1. ``tool_result_transforms``: each tool result envelope before it is serialised;
2. ``tool_transforms``: the tool definitions before the adapter (the plan records them);
3. ``message_transforms``: each wire message after the adapter built the request;
4. ``response_transforms``: the decoded response body before the adapter parses it;
5. ``tool_call_transforms``: the parsed tool calls before they are stored.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pydantic import JsonValue

from durable_loop.core.canonical_json import canonical_dumps
from durable_loop.core.messages import Message, ToolCall
from durable_loop.core.tools import ToolSpec
from durable_loop.core.transforms import inbound, outbound
from durable_loop.core.transforms.inbound import InboundContext
from durable_loop.core.transforms.names import (
    MESSAGE_TRANSFORMS,
    RESPONSE_TRANSFORMS,
    TOOL_CALL_TRANSFORMS,
    TOOL_RESULT_TRANSFORMS,
    TOOL_TRANSFORMS,
    TransformSet,
)

Body = dict[str, JsonValue]


def _table(module: object, names: tuple[str, ...]) -> dict[str, Callable[..., Any]]:
    return {name: getattr(module, name) for name in names}


MESSAGE: dict[str, Callable[[Body], Body]] = _table(outbound, MESSAGE_TRANSFORMS)
TOOLS: dict[str, Callable[[list[ToolSpec]], list[ToolSpec]]] = _table(outbound, TOOL_TRANSFORMS)
RESPONSE: dict[str, Callable[[Body, InboundContext], Body]] = _table(inbound, RESPONSE_TRANSFORMS)
TOOL_CALLS: dict[str, Callable[[list[ToolCall]], list[ToolCall]]] = _table(
    inbound, TOOL_CALL_TRANSFORMS
)
TOOL_RESULTS: dict[str, Callable[[Body], Body]] = _table(inbound, TOOL_RESULT_TRANSFORMS)


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


def transform_tools(names: list[str], tools: list[ToolSpec]) -> list[ToolSpec]:
    for name in names:
        tools = TOOLS[name](tools)
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


__all__ = [
    "InboundContext",
    "TransformSet",
    "render_tool_results",
    "transform_response",
    "transform_tool_calls",
    "transform_tools",
    "transform_wire_messages",
]
