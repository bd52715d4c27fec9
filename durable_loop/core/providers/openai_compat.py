"""OpenAI-compatible chat completions: ``tool_calls`` / ``role: tool``.

Parsing follows the API reference: ``tool_calls`` is an array of ``{id, type, function:
{name, arguments}}`` with ``arguments`` a JSON string. Drift seen on compatible servers
(``tool_calls`` as an object, arguments as an object, the deprecated ``function_call``) is
a PROVIDER_BAD_RESPONSE naming the response transform that accepts it; the provider's
normalisation (``transforms.provider_normalization``, on by default) applies those transforms.
"""

from __future__ import annotations

from pydantic import JsonValue

from durable_loop.core.messages import Message, ToolCall, Usage
from durable_loop.core.plan import PromptPlan
from durable_loop.core.providers.base import (
    ProviderFormatError,
    ProviderReply,
    ProviderRequest,
    Retryability,
    classify_http_status,
    loads_lenient,
    tool_result_text,
)
from durable_loop.core.providers.call_ids import OPENAI_IDS, wire_call_ids
from durable_loop.core.providers.pairing import pair_tool_results


def message_to_wire(message: Message) -> dict[str, JsonValue]:
    if message.role == "tool":
        return {
            "role": "tool",
            "tool_call_id": message.tool_call_id or "",
            "content": tool_result_text(message),
        }
    wire: dict[str, JsonValue] = {"role": message.role, "content": message.content or ""}
    if message.role == "assistant" and message.tool_calls:
        wire["tool_calls"] = [_call_to_wire(call) for call in message.tool_calls]
    return wire


def _call_to_wire(call: ToolCall) -> dict[str, JsonValue]:
    wire: dict[str, JsonValue] = {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": call.arguments},
    }
    if call.signature:
        wire["extra_content"] = {"google": {"thought_signature": call.signature}}
    return wire


def tool_to_wire(plan: PromptPlan) -> list[JsonValue]:
    tools: list[JsonValue] = []
    for spec in plan.tools:
        function: dict[str, JsonValue] = {"name": spec.name}
        if spec.description:
            function["description"] = spec.description
        function["parameters"] = spec.parameters
        tools.append({"type": "function", "function": function})
    return tools


def _signature_of(item: dict[str, JsonValue]) -> str | None:
    extra = item.get("extra_content")
    google = extra.get("google") if isinstance(extra, dict) else None
    signature = google.get("thought_signature") if isinstance(google, dict) else None
    return signature if isinstance(signature, str) and signature else None


def _call_from(item: JsonValue, index: int, raw: str) -> ToolCall:
    where = f"tool_calls[{index}]"
    if not isinstance(item, dict):
        raise ProviderFormatError(f"{where} is not an object", raw)
    function = item.get("function")
    if not isinstance(function, dict):
        raise ProviderFormatError(f"{where} has no function object", raw)
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise ProviderFormatError(f"{where} has no function name", raw)
    call_id = item.get("id")
    if not isinstance(call_id, str) or not call_id:
        raise ProviderFormatError(f"{where} has no id", raw)
    arguments = function.get("arguments")
    if arguments is None:
        arguments = ""
    if not isinstance(arguments, str):
        raise ProviderFormatError(
            f"{where} arguments are not a JSON string "
            "(the assistant_tool_calls_arguments_json_string_if_hash transform accepts this)",
            raw,
        )
    return ToolCall(id=call_id, name=name, arguments=arguments, signature=_signature_of(item))


class OpenAICompatAdapter:
    name = "openai"
    default_api_prefix = "/v1"
    messages_key = "messages"
    # OpenAI takes tool messages without tools; the packaged local model prints calls as
    # text under tool_choice "none" but answers when the tools are left out.
    no_call_keeps_tools = False

    def build_request(self, plan: PromptPlan, messages: list[Message]) -> ProviderRequest:
        body: dict[str, JsonValue] = dict(plan.llm_options)
        body["model"] = plan.model
        paired = wire_call_ids(pair_tool_results(messages), OPENAI_IDS)
        body["messages"] = [message_to_wire(m) for m in paired]
        if plan.tools:
            body["tools"] = tool_to_wire(plan)
            if plan.tool_choice is not None:
                body["tool_choice"] = plan.tool_choice
        else:
            body.pop("parallel_tool_calls", None)
        return ProviderRequest(endpoint="/chat/completions", body=body)

    def parse_response(self, body: JsonValue, raw: str) -> ProviderReply:
        if not isinstance(body, dict):
            raise ProviderFormatError("response is not a JSON object", raw)
        choices = body.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise ProviderFormatError("response has no choices[0]", raw)
        choice = choices[0]
        wire = choice.get("message")
        if not isinstance(wire, dict):
            raise ProviderFormatError("choices[0].message is missing", raw)
        content = wire.get("content")
        if isinstance(content, list):
            content = "".join(
                str(part.get("text") or "") for part in content if isinstance(part, dict)
            )
        if content is not None and not isinstance(content, str):
            raise ProviderFormatError("message content is neither text nor parts", raw)
        calls: list[ToolCall] = []
        raw_calls = wire.get("tool_calls")
        if raw_calls:
            if not isinstance(raw_calls, list):
                raise ProviderFormatError(
                    "tool_calls is not an array "
                    "(the assistant_tool_calls_object_to_array transform accepts this)",
                    raw,
                )
            calls = [_call_from(c, i, raw) for i, c in enumerate(raw_calls)]
        elif wire.get("function_call"):
            raise ProviderFormatError(
                "the reply uses the deprecated function_call field "
                "(the assistant_function_call_to_tool_calls transform accepts this)",
                raw,
            )
        finish = choice.get("finish_reason")
        return ProviderReply(
            message=Message(role="assistant", content=content, tool_calls=calls),
            finish_reason=finish if isinstance(finish, str) else None,
            usage=_usage(body.get("usage"), body.get("timings")),
        )

    def request_headers(self, api_key: str | None) -> dict[str, str]:
        return {"Authorization": f"Bearer {api_key}"} if api_key else {}

    def classify_status(self, status: int, raw: str) -> Retryability:
        return classify_http_status(status, raw)


def _usage(raw: object, timings: object = None) -> Usage:
    """Token counts; the cached prompt tokens from ``prompt_tokens_details`` or, from a
    llama.cpp server, which reports them only in its ``timings`` (``cache_n``)."""
    if not isinstance(raw, dict):
        return Usage()
    details = raw.get("prompt_tokens_details")
    cached = details.get("cached_tokens", 0) if isinstance(details, dict) else 0
    if not isinstance(details, dict) and isinstance(timings, dict):
        cached = timings.get("cache_n", 0)

    def _int(value: object) -> int:
        return value if isinstance(value, int) and value >= 0 else 0

    return Usage(
        input_tokens=_int(raw.get("prompt_tokens")),
        output_tokens=_int(raw.get("completion_tokens")),
        cached_tokens=_int(cached),
    )


__all__ = ["OpenAICompatAdapter", "loads_lenient", "message_to_wire", "tool_to_wire"]
