"""The contract every provider adapter fulfils, and the helpers adapters share."""

from __future__ import annotations

import json
import re
from typing import Protocol

from pydantic import BaseModel, Field, JsonValue

from durable_loop.core.canonical_json import canonical_dumps, scrub_surrogates, strict_loads
from durable_loop.core.errors import DurableLoopError, ErrorCode, http_status_code
from durable_loop.core.messages import Message, Usage
from durable_loop.core.plan import PromptPlan

SNIPPET_LIMIT = 500
SYNTHETIC_ID_PREFIX = "dlc_"
"""Ids the runtime makes up for providers (or transforms) that give calls none."""


class ProviderRequest(BaseModel):
    endpoint: str = Field(description="Path appended to base_url + api_prefix")
    body: dict[str, JsonValue]


class ProviderReply(BaseModel):
    message: Message
    finish_reason: str | None = None
    usage: Usage = Usage()


class ProviderFormatError(DurableLoopError, ValueError):
    """A response this adapter cannot read; carries a bounded snippet of the raw body."""

    def __init__(self, reason: str, raw: str) -> None:
        self.reason = reason
        self.snippet = raw[:SNIPPET_LIMIT]
        super().__init__(
            ErrorCode.PROVIDER_BAD_RESPONSE, f"{reason}; response began: {self.snippet!r}"
        )


class ProviderErrorReply(DurableLoopError):
    """A well-formed error inside a successful HTTP reply (e.g. Anthropic's overloaded
    event, Gemini's blocked prompt): the adapter says whether it is worth retrying."""

    show_code = True

    def __init__(self, code: ErrorCode, message: str, *, retryable: bool) -> None:
        super().__init__(code, message)
        self.retryable = retryable


class Retryability(BaseModel):
    retryable: bool
    code: str = Field(description="An ErrorCode, or HTTP_<status> for a retryable status")
    retry_after_s: float | None = Field(
        default=None, description="A delay the provider asked for in its error body"
    )


class ProviderAdapter(Protocol):
    name: str
    default_api_prefix: str
    messages_key: str
    """Key of the request body's message list (outbound message transforms walk it)."""
    no_call_keeps_tools: bool
    """How a request that must be answered without a tool call is sent once the messages
    hold tool calls or results: True keeps the tools and asks for no call (``tool_choice``
    none; the provider refuses tool blocks without tools), False leaves the tools out."""

    def build_request(self, plan: PromptPlan, messages: list[Message]) -> ProviderRequest: ...

    def parse_response(self, body: JsonValue, raw: str) -> ProviderReply: ...

    def request_headers(self, api_key: str | None) -> dict[str, str]: ...

    def classify_status(self, status: int, raw: str) -> Retryability: ...


CONTEXT_EXCEEDED_TYPES = frozenset({"exceed_context_size_error", "context_length_exceeded"})
"""``error.type`` / ``error.code`` of a request longer than the model's context (llama.cpp's
server; OpenAI)."""
CONTEXT_EXCEEDED_TEXT = re.compile(
    r"maximum context length|exceeds the available context size|prompt is too long"
    r"|input token count .*exceeds the maximum",
    re.IGNORECASE,
)
"""The same refusal as only its text says it (vLLM and OpenAI-compatible gateways;
Anthropic's "prompt is too long"; Gemini's "input token count ... exceeds the maximum")."""


def classify_http_status(status: int, raw: str) -> Retryability:
    """The common rule: 408/409/429/5xx retry; other 4xx fail fast, as
    PROVIDER_CONTEXT_EXCEEDED when the body says the request is longer than the model's
    context (no retry makes it shorter)."""
    if status in (408, 409, 429) or status >= 500:
        return Retryability(retryable=True, code=http_status_code(status))
    if status in (401, 403):
        return Retryability(retryable=False, code=ErrorCode.PROVIDER_AUTH)
    if status in (400, 413) and context_exceeded(raw):
        return Retryability(retryable=False, code=ErrorCode.PROVIDER_CONTEXT_EXCEEDED)
    return Retryability(retryable=False, code=ErrorCode.PROVIDER_BAD_REQUEST)


def context_exceeded(raw: str) -> bool:
    """Whether an error body says the request does not fit the model's context (its
    ``error`` object's type or code, or its text: vLLM puts the message at the top)."""
    error = error_body(raw)
    marks = {mark for mark in (error.get("type"), error.get("code")) if isinstance(mark, str)}
    return bool(CONTEXT_EXCEEDED_TYPES & marks) or bool(
        CONTEXT_EXCEEDED_TEXT.search(raw[:SNIPPET_LIMIT])
    )


def loads_lenient(raw: str) -> JsonValue:
    """Parse a response body; raise ProviderFormatError with a snippet if it is not JSON."""
    try:
        value: JsonValue = scrub_surrogates(json.loads(raw))
    except (ValueError, RecursionError):
        raise ProviderFormatError("response is not JSON", raw) from None
    return value


def error_body(raw: str) -> dict[str, JsonValue]:
    """The ``error`` object of an error reply, or {} when the body is not that shape."""
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):
        return {}
    if isinstance(body, list) and body and isinstance(body[0], dict):
        body = body[0]  # some gateways wrap Google errors in a list
    error = body.get("error") if isinstance(body, dict) else None
    return error if isinstance(error, dict) else {}


def tool_result_text(message: Message) -> str:
    """What the model reads for a tool result: pre-rendered content, else the envelope."""
    if message.content is not None:
        return message.content
    return message.envelope.to_content() if message.envelope else ""


def arguments_object(arguments: str) -> dict[str, JsonValue]:
    """Call arguments as an object for providers that take one (``input``, ``args``).

    Invalid or non-object JSON becomes {}: such a call was refused by the loop with
    INVALID_JSON, and its tool result tells the model so.
    """
    try:
        value = strict_loads(arguments) if arguments.strip() else {}
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def arguments_text(value: object) -> str:
    """An object of arguments as canonical JSON text (the canonical ToolCall form)."""
    return canonical_dumps(value)  # type: ignore[arg-type]


def synthetic_call_id(prefix: str, index: int) -> str:
    return f"{SYNTHETIC_ID_PREFIX}{prefix}_{index}"


def fill_missing_call_ids(message: Message, prefix: str) -> Message:
    """Give id-less calls (Gemini, legacy function_call) ids unique within the session.

    ``prefix`` comes from the seq the workflow allocated for the message, so retries
    produce the same ids.
    """
    if all(call.id for call in message.tool_calls):
        return message
    calls = [
        call if call.id else call.model_copy(update={"id": synthetic_call_id(prefix, index)})
        for index, call in enumerate(message.tool_calls)
    ]
    return message.model_copy(update={"tool_calls": calls})


def is_synthetic_id(call_id: str | None) -> bool:
    return bool(call_id) and str(call_id).startswith(SYNTHETIC_ID_PREFIX)


__all__ = [
    "SNIPPET_LIMIT",
    "ProviderAdapter",
    "ProviderErrorReply",
    "ProviderFormatError",
    "ProviderReply",
    "ProviderRequest",
    "Retryability",
    "arguments_object",
    "arguments_text",
    "classify_http_status",
    "error_body",
    "fill_missing_call_ids",
    "is_synthetic_id",
    "loads_lenient",
    "synthetic_call_id",
    "tool_result_text",
]
