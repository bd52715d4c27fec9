"""Outbound transforms: wire messages (after the adapter) and tool definitions (before it).

Message transforms take one wire message of the provider's shape and return a new one;
they change only the shapes they name and pass every other message through.
"""

from __future__ import annotations

import copy

from pydantic import JsonValue

from durable_loop.core.tools import ToolSpec

WireMessage = dict[str, JsonValue]
SKIP_SIGNATURE = "skip_thought_signature_validator"
"""Gemini's documented placeholder for function calls it did not sign itself."""


def _openai_tool_call_turn(message: WireMessage) -> bool:
    return message.get("role") == "assistant" and bool(message.get("tool_calls"))


def assistant_tool_calls_content_null_if_blank(message: WireMessage) -> WireMessage:
    """OpenAI shape: ``content: null`` instead of "" beside ``tool_calls`` (strict servers
    reject an empty string there)."""
    content = message.get("content")
    if _openai_tool_call_turn(message) and isinstance(content, str) and not content.strip():
        return {**message, "content": None}
    return message


def assistant_tool_calls_reasoning_content_empty_if_missing(message: WireMessage) -> WireMessage:
    """OpenAI shape: ``reasoning_content: ""`` on tool-call turns (DeepSeek reasoner routes
    reject tool-call turns without the field)."""
    if _openai_tool_call_turn(message) and "reasoning_content" not in message:
        return {**message, "reasoning_content": ""}
    return message


def assistant_tool_calls_signature_skip_validator_if_missing(message: WireMessage) -> WireMessage:
    """Gemini 3 validates a thought signature on the first function call of each model
    step. When that call has none (history from another model, or calls recovered from
    text), send the documented skip value. Handles the OpenAI-compatible shape
    (``extra_content.google.thought_signature``) and the native one (``thoughtSignature``).
    """
    calls = message.get("tool_calls")
    if _openai_tool_call_turn(message) and isinstance(calls, list):
        dicts = [c for c in calls if isinstance(c, dict)]
        if not dicts or any(_openai_signature(c) for c in dicts):
            return message
        first = copy.deepcopy(dicts[0])
        extra = first.get("extra_content")
        extra = dict(extra) if isinstance(extra, dict) else {}
        google = extra.get("google")
        extra["google"] = {
            **(google if isinstance(google, dict) else {}),
            "thought_signature": SKIP_SIGNATURE,
        }
        first["extra_content"] = extra
        at = calls.index(dicts[0])
        return {**message, "tool_calls": [*calls[:at], first, *calls[at + 1 :]]}
    parts = message.get("parts")
    if message.get("role") != "model" or not isinstance(parts, list):
        return message
    for index, part in enumerate(parts):
        if isinstance(part, dict) and "functionCall" in part:
            if part.get("thoughtSignature"):
                return message
            signed: dict[str, JsonValue] = {**part, "thoughtSignature": SKIP_SIGNATURE}
            return {**message, "parts": [*parts[:index], signed, *parts[index + 1 :]]}
    return message


def _openai_signature(call: dict[str, JsonValue]) -> bool:
    extra = call.get("extra_content")
    google = extra.get("google") if isinstance(extra, dict) else None
    return isinstance(google, dict) and bool(google.get("thought_signature"))


def tools_hide_implicit_arguments(tools: list[ToolSpec]) -> list[ToolSpec]:
    """Leave each tool's ``implicit_args`` out of the schema the model sees. Small models
    fill an optional id they were offered with a placeholder ("your_workspace_id") that
    the tool must then refuse; an argument the model never sees cannot be made up."""
    out = []
    for tool in tools:
        hidden = set(tool.implicit_args)
        props = tool.parameters.get("properties")
        if not hidden or not isinstance(props, dict):
            out.append(tool)
            continue
        parameters = {
            **tool.parameters,
            "properties": {k: v for k, v in props.items() if k not in hidden},
        }
        required = tool.parameters.get("required")
        if isinstance(required, list):
            parameters["required"] = [r for r in required if r not in hidden]
        out.append(tool.model_copy(update={"parameters": parameters}))
    return out


def openai_tools_strip_function_descriptions(tools: list[ToolSpec]) -> list[ToolSpec]:
    """Send tools without their descriptions (routes that choke on long tool lists); the
    adapters leave an empty description out of every provider's wire shape."""
    return [t.model_copy(update={"description": ""}) for t in tools]
