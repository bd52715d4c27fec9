"""The contract every provider adapter fulfils."""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, Field, JsonValue

from durable_loop.toolcalling.messages import Message, Usage
from durable_loop.toolcalling.plan import PromptPlan

SNIPPET_LIMIT = 500


class ProviderRequest(BaseModel):
    endpoint: str = Field(description="Path appended to base_url + api_prefix")
    body: dict[str, JsonValue]


class ProviderReply(BaseModel):
    message: Message
    finish_reason: str | None = None
    usage: Usage = Usage()


class ProviderFormatError(ValueError):
    """A response this adapter cannot read; carries a bounded snippet of the raw body."""

    def __init__(self, reason: str, raw: str) -> None:
        self.reason = reason
        self.snippet = raw[:SNIPPET_LIMIT]
        super().__init__(f"{reason}; response began: {self.snippet!r}")


class Retryability(BaseModel):
    retryable: bool
    code: str


class ProviderAdapter(Protocol):
    name: str

    def build_request(self, plan: PromptPlan, messages: list[Message]) -> ProviderRequest: ...

    def parse_response(self, body: JsonValue, raw: str) -> ProviderReply: ...

    def auth_headers(self, api_key: str) -> dict[str, str]: ...

    def classify_status(self, status: int, raw: str) -> Retryability: ...


def classify_http_status(status: int) -> Retryability:
    """The common rule: 408/409/429/5xx retry; other 4xx fail fast."""
    if status in (408, 409, 429) or status >= 500:
        return Retryability(retryable=True, code=f"HTTP_{status}")
    if status in (401, 403):
        return Retryability(retryable=False, code="PROVIDER_AUTH")
    return Retryability(retryable=False, code="PROVIDER_BAD_REQUEST")
