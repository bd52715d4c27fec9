"""OpenAI-compatible chat completions: ``tool_calls`` / ``role: tool``, legacy ``function_call``.

Parsing is tolerant of the shape drift seen across compatible servers: ``tool_calls`` as an
object instead of an array, arguments as an object instead of a JSON string, blank
arguments, missing call ids, and the legacy single ``function_call``.
"""

from __future__ import annotations

import json

from pydantic import JsonValue

from durable_loop.toolcalling.canonical_json import canonical_dumps
from durable_loop.toolcalling.messages import Message, ToolCall, Usage
from durable_loop.toolcalling.plan import PromptPlan
from durable_loop.toolcalling.providers.base import (
    ProviderFormatError,
    ProviderReply,
    ProviderRequest,
    Retryability,
    classify_http_status,
)


def message_to_wire(message: Message) -> dict[str, JsonValue]:
    if message.role == "tool":
        content = message.envelope.to_content() if message.envelope else (message.content or "")
        return {"role": "tool", "tool_call_id": message.tool_call_id or "", "content": content}
    wire: dict[str, JsonValue] = {"role": message.role, "content": message.content or ""}
    if message.role == "assistant" and message.tool_calls:
        wire["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in message.tool_calls
        ]
    return wire


def tool_to_wire(plan: PromptPlan) -> list[JsonValue]:
    return [
        {
            "type": "function",
            "function": {
                "name": spec.name,
                "description": spec.description,
                "parameters": spec.parameters,
            },
        }
        for spec in plan.tools
    ]


def _arguments_text(raw: object) -> str:
    if raw is None:
        return "{}"
    if isinstance(raw, str):
        return raw if raw.strip() else "{}"
    return canonical_dumps(raw)  # type: ignore[arg-type]


def _calls_from(raw_calls: object, raw: str) -> list[ToolCall]:
    if isinstance(raw_calls, dict):
        raw_calls = [raw_calls]
    if not isinstance(raw_calls, list):
        raise ProviderFormatError("tool_calls is neither an array nor an object", raw)
    calls: list[ToolCall] = []
    for index, item in enumerate(raw_calls):
        if not isinstance(item, dict):
            raise ProviderFormatError(f"tool_calls[{index}] is not an object", raw)
        function = item.get("function") if isinstance(item.get("function"), dict) else item
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(name, str) or not name:
            raise ProviderFormatError(f"tool_calls[{index}] has no function name", raw)
        call_id = item.get("id")
        calls.append(
            ToolCall(
                id=call_id if isinstance(call_id, str) and call_id else f"call_{index}",
                name=name,
                arguments=_arguments_text(function.get("arguments")),  # type: ignore[union-attr]
            )
        )
    return calls


class OpenAICompatAdapter:
    name = "openai"

    def build_request(self, plan: PromptPlan, messages: list[Message]) -> ProviderRequest:
        body: dict[str, JsonValue] = dict(plan.llm_options)
        body["model"] = plan.model
        body["messages"] = [message_to_wire(m) for m in messages]
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
        if wire.get("tool_calls"):
            calls = _calls_from(wire["tool_calls"], raw)
        elif isinstance(wire.get("function_call"), dict):
            calls = _calls_from([{"function": wire["function_call"]}], raw)
        finish = choice.get("finish_reason")
        return ProviderReply(
            message=Message(role="assistant", content=content, tool_calls=calls),
            finish_reason=finish if isinstance(finish, str) else None,
            usage=_usage(body.get("usage")),
        )

    def auth_headers(self, api_key: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {api_key}"}

    def classify_status(self, status: int, raw: str) -> Retryability:
        return classify_http_status(status)


def _usage(raw: object) -> Usage:
    if not isinstance(raw, dict):
        return Usage()
    details = raw.get("prompt_tokens_details")
    cached = details.get("cached_tokens", 0) if isinstance(details, dict) else 0

    def _int(value: object) -> int:
        return value if isinstance(value, int) and value >= 0 else 0

    return Usage(
        input_tokens=_int(raw.get("prompt_tokens")),
        output_tokens=_int(raw.get("completion_tokens")),
        cached_tokens=_int(cached),
    )


def loads_lenient(raw: str) -> JsonValue:
    """Parse a response body; raise ProviderFormatError with a snippet if it is not JSON."""
    try:
        value: JsonValue = json.loads(raw)
    except ValueError:
        raise ProviderFormatError("response is not JSON", raw) from None
    return value
