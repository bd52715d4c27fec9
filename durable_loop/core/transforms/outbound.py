"""Outbound transforms: wire messages (after the adapter) and tool definitions (before it).

Message transforms take one wire message of the provider's shape and return a new one;
they change only the shapes they name and pass every other message through. Tool
transforms take the tool definitions and the request's :class:`OutboundContext`.
"""

from __future__ import annotations

import copy

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from durable_loop.core.tools import ToolSpec

WireMessage = dict[str, JsonValue]
SKIP_SIGNATURE = "skip_thought_signature_validator"
"""Gemini's documented placeholder for function calls it did not sign itself."""
REPLY_CHARS_PER_TOKEN = 8
"""A generous ceiling on the characters a reply writes per token (prose and copied text
run at about four): a string budget above ``max_reply_tokens`` times this cannot bind."""
SCHEMA_VALUE_KEYS = frozenset({"const", "default", "enum", "examples"})
"""JSON Schema keywords whose values are data, not schemas."""


class OutboundContext(BaseModel):
    """What a tool transform may read of the session besides the tools."""

    model_config = ConfigDict(frozen=True)

    max_args_bytes: int | None = Field(
        default=None, description="The session's max_tool_args_bytes (None: not sent)"
    )
    max_reply_tokens: int | None = Field(
        default=None, description="The request's cap on reply tokens (None: not set)"
    )


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


def tools_hide_implicit_arguments(tools: list[ToolSpec], ctx: OutboundContext) -> list[ToolSpec]:
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


def openai_tools_strip_function_descriptions(
    tools: list[ToolSpec], ctx: OutboundContext
) -> list[ToolSpec]:
    """Send tools without their descriptions (routes that choke on long tool lists); the
    adapters leave an empty description out of every provider's wire shape."""
    return [t.model_copy(update={"description": ""}) for t in tools]


def tools_string_max_length_from_args_budget(
    tools: list[ToolSpec], ctx: OutboundContext
) -> list[ToolSpec]:
    """Give every string in the tool schemas a ``maxLength`` of the session's argument
    budget (``max_tool_args_bytes``), keeping a smaller one the tool declares.

    A server that turns the schema into a grammar (llama.cpp does, for a call once it has
    started) then stops a runaway string where the budget ends, so the call stays valid
    JSON and the argument guard refuses it with ARGUMENTS_TOO_LARGE, which the model can
    act on; without it the small model copies a long text into the call up to the reply's
    token cap and the call is lost as unparseable text. The cap is the whole budget, not
    less: a string that reaches it makes the arguments larger than the budget, so a
    string cut by the grammar is always refused, never executed cut.

    Nothing changes when the reply's token cap could not reach the budget anyway: the
    schemas are also part of the prompt (chat templates print them), and on the local
    Qwen a ``maxLength`` it could never reach still changed which calls it wrote."""
    budget = ctx.max_args_bytes
    reply = ctx.max_reply_tokens
    if budget is None or (reply is not None and budget >= reply * REPLY_CHARS_PER_TOKEN):
        return tools
    return [t.model_copy(update={"parameters": _capped(t.parameters, budget)}) for t in tools]


def _capped_value(node: JsonValue, budget: int) -> JsonValue:
    if isinstance(node, list):
        return [_capped_value(item, budget) for item in node]
    return _capped(node, budget) if isinstance(node, dict) else node


def _capped(node: dict[str, JsonValue], budget: int) -> dict[str, JsonValue]:
    out: dict[str, JsonValue] = {
        key: value if key in SCHEMA_VALUE_KEYS else _capped_value(value, budget)
        for key, value in node.items()
    }
    kinds = out.get("type")
    is_string = kinds == "string" or (isinstance(kinds, list) and "string" in kinds)
    declared = out.get("maxLength")
    if is_string and not (isinstance(declared, int) and declared <= budget):
        out["maxLength"] = budget
    return out
