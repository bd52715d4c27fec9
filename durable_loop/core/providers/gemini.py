"""Google Gemini ``generateContent``: ``functionCall`` / ``functionResponse`` parts.

Shape rules (from the API reference): roles are ``user`` and ``model``; the system prompt
is ``systemInstruction``; tools are ``functionDeclarations`` (JSON Schema parameters go in
``parametersJsonSchema``); after a model turn with N ``functionCall`` parts comes a user
turn with N ``functionResponse`` parts, matched by name and order (Gemini ids are optional,
so the runtime makes up stable ones when none come back and leaves them out on the wire).
``thoughtSignature`` values on call parts are kept and sent back verbatim.

Errors: 429 ``RESOURCE_EXHAUSTED``, 500, 503 ``UNAVAILABLE`` and 504 retry (with the
``RetryInfo`` delay when the body has one); an invalid API key (400 ``API_KEY_INVALID``),
401 and 403 are PROVIDER_AUTH.
"""

from __future__ import annotations

import json
import re

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
    is_synthetic_id,
    tool_result_text,
)
from durable_loop.core.providers.call_ids import GEMINI_IDS, wire_call_ids
from durable_loop.core.providers.pairing import pair_tool_results

CONTINUE_TEXT = "(continuing the conversation)"
RETRYABLE_STATUSES = {"RESOURCE_EXHAUSTED", "UNAVAILABLE", "INTERNAL", "DEADLINE_EXCEEDED"}
AUTH_STATUSES = {"UNAUTHENTICATED", "PERMISSION_DENIED"}
BLOCKED_FINISH = {"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII"}
GENERATION_OPTIONS = {
    "temperature": "temperature",
    "top_p": "topP",
    "top_k": "topK",
    "max_tokens": "maxOutputTokens",
    "max_completion_tokens": "maxOutputTokens",
    "stop": "stopSequences",
    "seed": "seed",
    "presence_penalty": "presencePenalty",
    "frequency_penalty": "frequencyPenalty",
}
DROPPED_OPTIONS = {"parallel_tool_calls", "min_p", "n", "user"}
DELAY = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")

Part = dict[str, JsonValue]


def _response_object(message: Message) -> dict[str, JsonValue]:
    text = tool_result_text(message)
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        value = None
    return value if isinstance(value, dict) else {"result": text}


def _parts(message: Message) -> list[Part]:
    if message.role == "tool":
        response: dict[str, JsonValue] = {
            "name": message.name or "",
            "response": _response_object(message),
        }
        if message.tool_call_id and not is_synthetic_id(message.tool_call_id):
            response["id"] = message.tool_call_id
        return [{"functionResponse": response}]
    parts: list[Part] = []
    if message.content and message.content.strip():
        parts.append({"text": message.content})
    for call in message.tool_calls:
        function: dict[str, JsonValue] = {
            "name": call.name,
            "args": arguments_object(call.arguments),
        }
        if call.id and not is_synthetic_id(call.id):
            function["id"] = call.id
        part: Part = {"functionCall": function}
        if call.signature:
            part["thoughtSignature"] = call.signature
        parts.append(part)
    return parts


def to_wire_contents(messages: list[Message]) -> tuple[str | None, list[JsonValue]]:
    """Canonical messages -> (system instruction text, user/model contents)."""
    system_parts = [m.content for m in messages if m.role == "system" and m.content]
    turns: list[tuple[str, list[Part]]] = []
    paired = pair_tool_results([m for m in messages if m.role != "system"])
    for message in wire_call_ids(paired, GEMINI_IDS):
        role = "model" if message.role == "assistant" else "user"
        parts = _parts(message)
        if not parts:
            continue
        if turns and turns[-1][0] == role:
            turns[-1][1].extend(parts)
        else:
            turns.append((role, parts))
    if not turns or turns[0][0] != "user":
        turns.insert(0, ("user", [{"text": CONTINUE_TEXT}]))
    contents: list[JsonValue] = []
    for role, parts in turns:
        if role == "user":  # function responses first, then any text of the same turn
            parts = [p for p in parts if "functionResponse" in p] + [
                p for p in parts if "functionResponse" not in p
            ]
        contents.append({"role": role, "parts": list(parts)})
    return ("\n\n".join(system_parts) or None), contents


def _tool_config(choice: str | dict[str, JsonValue] | None) -> dict[str, JsonValue] | None:
    if choice == "auto":
        config: dict[str, JsonValue] = {"mode": "AUTO"}
    elif choice == "required":
        config = {"mode": "ANY"}
    elif choice == "none":
        config = {"mode": "NONE"}
    elif isinstance(choice, dict):
        function = choice.get("function")
        name = function.get("name") if isinstance(function, dict) else choice.get("name")
        if not isinstance(name, str):
            return None
        config = {"mode": "ANY", "allowedFunctionNames": [name]}
    else:
        return None
    return {"functionCallingConfig": config}


def _options(options: dict[str, JsonValue]) -> dict[str, JsonValue]:
    body: dict[str, JsonValue] = {}
    generation: dict[str, JsonValue] = {}
    for key, value in options.items():
        if key in DROPPED_OPTIONS:
            continue
        if key in GENERATION_OPTIONS:
            if key == "stop" and isinstance(value, str):
                value = [value]
            generation[GENERATION_OPTIONS[key]] = value
        elif key == "generationConfig" and isinstance(value, dict):
            generation.update(value)
        else:
            body[key] = value
    if generation:
        body["generationConfig"] = generation
    return body


class GeminiAdapter:
    name = "gemini"
    default_api_prefix = "/v1beta"
    messages_key = "contents"
    no_call_keeps_tools = True

    def build_request(self, plan: PromptPlan, messages: list[Message]) -> ProviderRequest:
        body = _options(plan.llm_options)
        system, contents = to_wire_contents(messages)
        if system:
            body["systemInstruction"] = {"parts": [{"text": system}]}
        body["contents"] = contents
        if plan.tools:
            declarations: list[JsonValue] = []
            for spec in plan.tools:
                declaration: dict[str, JsonValue] = {"name": spec.name}
                if spec.description:
                    declaration["description"] = spec.description
                declaration["parametersJsonSchema"] = spec.parameters
                declarations.append(declaration)
            body["tools"] = [{"functionDeclarations": declarations}]
            tool_config = _tool_config(plan.tool_choice)
            if tool_config is not None:
                body["toolConfig"] = tool_config
        model = plan.model.removeprefix("models/")
        return ProviderRequest(endpoint=f"/models/{model}:generateContent", body=body)

    def parse_response(self, body: JsonValue, raw: str) -> ProviderReply:
        if not isinstance(body, dict):
            raise ProviderFormatError("response is not a JSON object", raw)
        candidates = body.get("candidates")
        if not isinstance(candidates, list) or not candidates:
            feedback = body.get("promptFeedback")
            reason = feedback.get("blockReason") if isinstance(feedback, dict) else None
            if reason:
                raise ProviderErrorReply(
                    ErrorCode.PROVIDER_BLOCKED, f"prompt blocked: {reason}", retryable=False
                )
            raise ProviderFormatError("response has no candidates", raw)
        candidate = candidates[0]
        if not isinstance(candidate, dict):
            raise ProviderFormatError("candidates[0] is not an object", raw)
        finish = candidate.get("finishReason")
        finish_text = finish if isinstance(finish, str) else None
        if finish_text == "MALFORMED_FUNCTION_CALL":
            raise ProviderFormatError("the model emitted a malformed function call", raw)
        content = candidate.get("content")
        parts = content.get("parts") if isinstance(content, dict) else None
        if parts is None:
            if finish_text in BLOCKED_FINISH:
                raise ProviderErrorReply(
                    ErrorCode.PROVIDER_BLOCKED, f"reply blocked: {finish_text}", retryable=False
                )
            parts = []
        if not isinstance(parts, list):
            raise ProviderFormatError("candidates[0].content.parts is not an array", raw)
        texts: list[str] = []
        calls: list[ToolCall] = []
        for index, part in enumerate(parts):
            if not isinstance(part, dict):
                raise ProviderFormatError(f"parts[{index}] is not an object", raw)
            if "functionCall" in part:
                calls.append(_call(part, index, raw))
            elif isinstance(part.get("text"), str) and not part.get("thought"):
                texts.append(str(part["text"]))
        return ProviderReply(
            message=Message(
                role="assistant", content="".join(texts) if texts else None, tool_calls=calls
            ),
            finish_reason=_finish(finish_text, bool(calls)),
            usage=_usage(body.get("usageMetadata")),
        )

    def request_headers(self, api_key: str | None) -> dict[str, str]:
        return {"x-goog-api-key": api_key} if api_key else {}

    def classify_status(self, status: int, raw: str) -> Retryability:
        error = error_body(raw)
        verdict = classify_http_status(status, raw)
        state = error.get("status")
        if "API_KEY_INVALID" in json.dumps(error.get("details") or []) or state in AUTH_STATUSES:
            return Retryability(retryable=False, code=ErrorCode.PROVIDER_AUTH)
        if state in RETRYABLE_STATUSES:
            verdict = Retryability(retryable=True, code=http_status_code(status))
        if verdict.retryable:
            return verdict.model_copy(update={"retry_after_s": _retry_delay(error)})
        return verdict


def _call(part: dict[str, JsonValue], index: int, raw: str) -> ToolCall:
    function = part["functionCall"]
    if not isinstance(function, dict):
        raise ProviderFormatError(f"parts[{index}].functionCall is not an object", raw)
    name, args, call_id = function.get("name"), function.get("args", {}), function.get("id")
    if not isinstance(name, str) or not name:
        raise ProviderFormatError(f"parts[{index}].functionCall has no name", raw)
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise ProviderFormatError(f"parts[{index}].functionCall args is not an object", raw)
    signature = part.get("thoughtSignature")
    return ToolCall(
        id=call_id if isinstance(call_id, str) else "",
        name=name,
        arguments=arguments_text(args),
        signature=signature if isinstance(signature, str) and signature else None,
    )


def _finish(reason: str | None, has_calls: bool) -> str | None:
    if reason in (None, "STOP"):
        return "tool_calls" if has_calls else ("stop" if reason else None)
    if reason == "MAX_TOKENS":
        return "length"
    return reason.lower() if reason else None


def _retry_delay(error: dict[str, JsonValue]) -> float | None:
    details = error.get("details")
    for detail in details if isinstance(details, list) else []:
        delay = detail.get("retryDelay") if isinstance(detail, dict) else None
        match = DELAY.match(delay) if isinstance(delay, str) else None
        if match:
            return float(match.group(1))
    return None


def _usage(raw: object) -> Usage:
    if not isinstance(raw, dict):
        return Usage()

    def _int(key: str) -> int:
        value = raw.get(key)
        return value if isinstance(value, int) and value >= 0 else 0

    return Usage(
        input_tokens=_int("promptTokenCount"),
        output_tokens=_int("candidatesTokenCount") + _int("thoughtsTokenCount"),
        cached_tokens=_int("cachedContentTokenCount"),
    )
