"""Inbound transforms: the decoded response body before the adapter parses it, the parsed
tool calls, and tool result envelopes before they are serialised for the model.

Response transforms act on OpenAI-compatible bodies (``choices[].message``), where shape
drift happens; on other providers' bodies they change nothing.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from pydantic import BaseModel, Field, JsonValue

from durable_loop.core.canonical_json import canonical_dumps
from durable_loop.core.messages import ToolCall
from durable_loop.core.providers.base import synthetic_call_id
from durable_loop.core.transforms.text_calls import (
    TextCall,
    parse_json_calls,
    parse_tagged_calls,
)

Body = dict[str, JsonValue]
WireMessage = dict[str, JsonValue]


class InboundContext(BaseModel):
    call_id_prefix: str = Field(description="Seq-derived prefix for ids made up here")
    tool_names: list[str] = Field(default_factory=list, description="Tools sent this turn")


def _each_message(body: Body, change: Callable[[WireMessage, dict[str, JsonValue]], None]) -> Body:
    """Apply ``change(message, choice)`` to a copy of every ``choices[].message``."""
    choices = body.get("choices")
    if not isinstance(choices, list):
        return body
    out = copy.deepcopy(body)
    for choice in out["choices"]:  # type: ignore[union-attr]
        if isinstance(choice, dict) and isinstance(choice.get("message"), dict):
            change(choice["message"], choice)  # type: ignore[arg-type]
    return out


def _wire_calls(calls: list[TextCall], ctx: InboundContext) -> list[JsonValue]:
    return [
        {
            "id": synthetic_call_id(ctx.call_id_prefix, index),
            "type": "function",
            "function": {"name": call.name, "arguments": call.arguments},
        }
        for index, call in enumerate(calls)
    ]


def assistant_function_call_to_tool_calls(body: Body, ctx: InboundContext) -> Body:
    """Legacy ``function_call`` becomes a one-element ``tool_calls`` with a made-up id."""

    def change(message: WireMessage, choice: dict[str, JsonValue]) -> None:
        function = message.get("function_call")
        if not isinstance(function, dict) or message.get("tool_calls"):
            return
        message.pop("function_call")
        message["tool_calls"] = [
            {
                "id": synthetic_call_id(ctx.call_id_prefix, 0),
                "type": "function",
                "function": function,
            }
        ]
        if choice.get("finish_reason") == "function_call":
            choice["finish_reason"] = "tool_calls"

    return _each_message(body, change)


def assistant_tool_calls_object_to_array(body: Body, ctx: InboundContext) -> Body:
    """``tool_calls`` sent as one object (or an index-keyed map) becomes an array."""

    def change(message: WireMessage, choice: dict[str, JsonValue]) -> None:
        calls = message.get("tool_calls")
        if not isinstance(calls, dict):
            return
        if "function" in calls or "id" in calls:
            message["tool_calls"] = [calls]
        else:
            message["tool_calls"] = [v for v in calls.values() if isinstance(v, dict)]

    return _each_message(body, change)


def assistant_tool_calls_arguments_json_string_if_hash(body: Body, ctx: InboundContext) -> Body:
    """Arguments sent as a JSON object (not a string) become canonical JSON text."""

    def fix(function: JsonValue) -> None:
        if isinstance(function, dict) and isinstance(function.get("arguments"), dict | list):
            function["arguments"] = canonical_dumps(function["arguments"])

    def change(message: WireMessage, choice: dict[str, JsonValue]) -> None:
        calls = message.get("tool_calls")
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, dict):
                fix(call.get("function"))
        fix(message.get("function_call"))

    return _each_message(body, change)


def _text_calls(
    parse: Callable[[str, InboundContext], tuple[list[TextCall], str]],
) -> Callable[[Body, InboundContext], Body]:
    def transform(body: Body, ctx: InboundContext) -> Body:
        def change(message: WireMessage, choice: dict[str, JsonValue]) -> None:
            content = message.get("content")
            if message.get("tool_calls") or message.get("function_call"):
                return
            if not isinstance(content, str):
                return
            calls, rest = parse(content, ctx)
            if not calls:
                return
            message["tool_calls"] = _wire_calls(calls, ctx)
            message["content"] = rest or None
            choice["finish_reason"] = "tool_calls"

        return _each_message(body, change)

    return transform


assistant_content_tool_call_tags_to_tool_calls = _text_calls(
    lambda content, ctx: parse_tagged_calls(content)
)
assistant_content_tool_call_tags_to_tool_calls.__doc__ = (
    '``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` in the text become '
    "tool calls (opt-in fallback for models that write calls as text)."
)
assistant_content_json_tool_calls_to_tool_calls = _text_calls(
    lambda content, ctx: parse_json_calls(content, ctx.tool_names)
)
assistant_content_json_tool_calls_to_tool_calls.__doc__ = (
    "A reply that is (or fences) JSON objects naming a sent tool with its arguments becomes "
    "tool calls (small local models write calls this way)."
)


def assistant_tool_calls_arguments_blank_to_empty_object(calls: list[ToolCall]) -> list[ToolCall]:
    """Blank arguments ("" or whitespace) become ``{}``."""
    return [
        c.model_copy(update={"arguments": "{}"}) if not c.arguments.strip() else c for c in calls
    ]


def tool_result_compact_envelope(envelope: dict[str, JsonValue]) -> dict[str, JsonValue]:
    """Leave out empty ``warnings`` / ``errors`` and a null ``data``: fewer tokens per result."""
    return {
        key: value
        for key, value in envelope.items()
        if not (key in ("warnings", "errors") and not value)
        and not (key == "data" and value is None)
    }
