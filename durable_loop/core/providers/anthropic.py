"""Anthropic Messages API: ``tool_use`` / ``tool_result`` content blocks.

Rules the wire shape must keep (from the API reference):

* ``system`` is a top-level field, not a message;
* roles strictly alternate user / assistant, starting with user, so consecutive
  same-role turns are merged into one;
* every ``tool_result`` sits in the user turn right after the assistant turn holding its
  ``tool_use``, before any text of that turn;
* ``max_tokens`` is required;
* ``stop_reason: tool_use`` means the reply holds at least one ``tool_use`` block.

Errors: 429 and 5xx retry, including 529 ``overloaded_error``; 413 ``request_too_large``
fails fast like any other 4xx.
"""

from __future__ import annotations

from pydantic import JsonValue

from durable_loop.core.errors import ErrorCode, http_status_code
from durable_loop.core.messages import Message, ToolCall, Usage
from durable_loop.core.plan import PromptPlan
from durable_loop.core.providers.base import (
    ProviderErrorReply,
    ProviderFormatError,
    ProviderReply,
    ProviderRequest,
    Retryability,
    arguments_object,
    arguments_text,
    classify_http_status,
    error_body,
    tool_result_text,
)
from durable_loop.core.providers.call_ids import ANTHROPIC_IDS, wire_call_ids
from durable_loop.core.providers.pairing import pair_tool_results

API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096
CONTINUE_TEXT = "(continuing the conversation)"
RETRYABLE_ERROR_TYPES = {"overloaded_error", "rate_limit_error", "api_error"}
FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
}
# OpenAI-style options with an Anthropic name, and ones Anthropic rejects.
RENAMED_OPTIONS = {"max_completion_tokens": "max_tokens", "stop": "stop_sequences"}
DROPPED_OPTIONS = {
    "parallel_tool_calls",
    "seed",
    "frequency_penalty",
    "presence_penalty",
    "min_p",
    "n",
    "logprobs",
    "user",
}

Block = dict[str, JsonValue]


def _tool_choice(plan: PromptPlan) -> dict[str, JsonValue] | None:
    choice = plan.tool_choice
    mapped: dict[str, JsonValue] | None = None
    if choice == "auto":
        mapped = {"type": "auto"}
    elif choice == "required":
        mapped = {"type": "any"}
    elif choice == "none":
        mapped = {"type": "none"}
    elif isinstance(choice, dict):
        function = choice.get("function")
        name = function.get("name") if isinstance(function, dict) else choice.get("name")
        if choice.get("type") in ("auto", "any", "none", "tool") and "function" not in choice:
            mapped = dict(choice)
        elif isinstance(name, str):
            mapped = {"type": "tool", "name": name}
    no_parallel = plan.llm_options.get("parallel_tool_calls") is False
    if no_parallel and mapped is not None and mapped.get("type") != "none":
        mapped["disable_parallel_tool_use"] = True
    return mapped


def _blocks(message: Message) -> list[Block]:
    if message.role == "tool":
        envelope = message.envelope
        return [
            {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id or "",
                "content": tool_result_text(message),
                "is_error": bool(envelope is not None and not envelope.ok),
            }
        ]
    blocks: list[Block] = []
    if message.content and message.content.strip():
        blocks.append({"type": "text", "text": message.content})
    for call in message.tool_calls:
        blocks.append(
            {
                "type": "tool_use",
                "id": call.id,
                "name": call.name,
                "input": arguments_object(call.arguments),
            }
        )
    return blocks


def to_wire_messages(messages: list[Message]) -> tuple[str | None, list[JsonValue]]:
    """Canonical messages -> (system text, alternating user/assistant turns)."""
    system_parts = [m.content for m in messages if m.role == "system" and m.content]
    turns: list[tuple[str, list[Block]]] = []
    paired = pair_tool_results([m for m in messages if m.role != "system"])
    for message in wire_call_ids(paired, ANTHROPIC_IDS):
        role = "assistant" if message.role == "assistant" else "user"
        blocks = _blocks(message)
        if not blocks:
            continue  # Anthropic refuses empty turns
        if turns and turns[-1][0] == role:
            turns[-1][1].extend(blocks)
        else:
            turns.append((role, blocks))
    if not turns or turns[0][0] != "user":
        turns.insert(0, ("user", [{"type": "text", "text": CONTINUE_TEXT}]))
    wire: list[JsonValue] = []
    for role, blocks in turns:
        if role == "user":  # tool results first, then any text of the same turn
            blocks = [b for b in blocks if b["type"] == "tool_result"] + [
                b for b in blocks if b["type"] != "tool_result"
            ]
        wire.append({"role": role, "content": list(blocks)})
    return ("\n\n".join(system_parts) or None), wire


def _options(plan: PromptPlan) -> dict[str, JsonValue]:
    body: dict[str, JsonValue] = {}
    for key, value in plan.llm_options.items():
        if key in DROPPED_OPTIONS:
            continue
        if key == "stop" and isinstance(value, str):
            value = [value]
        body[RENAMED_OPTIONS.get(key, key)] = value
    body.setdefault("max_tokens", DEFAULT_MAX_TOKENS)
    return body


class AnthropicAdapter:
    name = "anthropic"
    default_api_prefix = "/v1"
    messages_key = "messages"
    # "Requests which include tool_use or tool_result blocks must define tools" (HTTP 400).
    no_call_keeps_tools = True

    def build_request(self, plan: PromptPlan, messages: list[Message]) -> ProviderRequest:
        body = _options(plan)
        body["model"] = plan.model
        system, wire = to_wire_messages(messages)
        if system:
            body["system"] = system
        body["messages"] = wire
        if plan.tools:
            tools: list[JsonValue] = []
            for spec in plan.tools:
                tool: dict[str, JsonValue] = {"name": spec.name}
                if spec.description:
                    tool["description"] = spec.description
                tool["input_schema"] = spec.parameters
                tools.append(tool)
            body["tools"] = tools
            choice = _tool_choice(plan)
            if choice is not None:
                body["tool_choice"] = choice
        return ProviderRequest(endpoint="/messages", body=body)

    def parse_response(self, body: JsonValue, raw: str) -> ProviderReply:
        if not isinstance(body, dict):
            raise ProviderFormatError("response is not a JSON object", raw)
        if body.get("type") == "error":
            error = body.get("error") if isinstance(body.get("error"), dict) else {}
            kind = str(error.get("type") or "error")  # type: ignore[union-attr]
            retryable = kind in RETRYABLE_ERROR_TYPES
            raise ProviderErrorReply(
                ErrorCode.PROVIDER_UNAVAILABLE if retryable else ErrorCode.PROVIDER_ERROR,
                f"{kind}: {error.get('message') or ''}",  # type: ignore[union-attr]
                retryable=retryable,
            )
        content = body.get("content")
        if body.get("type") != "message" or not isinstance(content, list):
            raise ProviderFormatError("not a Messages API reply (no message content)", raw)
        texts: list[str] = []
        calls: list[ToolCall] = []
        for index, block in enumerate(content):
            if not isinstance(block, dict):
                raise ProviderFormatError(f"content[{index}] is not an object", raw)
            if block.get("type") == "text":
                texts.append(str(block.get("text") or ""))
            elif block.get("type") == "tool_use":
                calls.append(_tool_use(block, index, raw))
        stop = body.get("stop_reason")
        if stop == "tool_use" and not calls:
            raise ProviderFormatError("stop_reason is tool_use but no tool_use block", raw)
        stop_text = stop if isinstance(stop, str) else None
        return ProviderReply(
            message=Message(
                role="assistant", content="".join(texts) if texts else None, tool_calls=calls
            ),
            finish_reason=FINISH_REASONS.get(stop_text or "", stop_text),
            usage=_usage(body.get("usage")),
        )

    def request_headers(self, api_key: str | None) -> dict[str, str]:
        headers = {"anthropic-version": API_VERSION}
        if api_key:
            headers["x-api-key"] = api_key
        return headers

    def classify_status(self, status: int, raw: str) -> Retryability:
        verdict = classify_http_status(status, raw)
        if error_body(raw).get("type") == "overloaded_error" and not verdict.retryable:
            return Retryability(retryable=True, code=http_status_code(529))
        return verdict


def _tool_use(block: dict[str, JsonValue], index: int, raw: str) -> ToolCall:
    call_id, name, arguments = block.get("id"), block.get("name"), block.get("input", {})
    if not isinstance(call_id, str) or not call_id:
        raise ProviderFormatError(f"content[{index}] tool_use has no id", raw)
    if not isinstance(name, str) or not name:
        raise ProviderFormatError(f"content[{index}] tool_use has no name", raw)
    if not isinstance(arguments, dict):
        raise ProviderFormatError(f"content[{index}] tool_use input is not an object", raw)
    return ToolCall(id=call_id, name=name, arguments=arguments_text(arguments))


def _usage(raw: object) -> Usage:
    """Anthropic counts cache reads and writes apart from ``input_tokens``; the canonical
    input is the whole prompt, with cache reads as ``cached_tokens``."""
    if not isinstance(raw, dict):
        return Usage()

    def _int(key: str) -> int:
        value = raw.get(key)
        return value if isinstance(value, int) and value >= 0 else 0

    cache_read = _int("cache_read_input_tokens")
    return Usage(
        input_tokens=_int("input_tokens") + cache_read + _int("cache_creation_input_tokens"),
        output_tokens=_int("output_tokens"),
        cached_tokens=cache_read,
    )
