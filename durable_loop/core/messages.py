"""Canonical conversation messages: the loop speaks only these, never a provider's shape."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from durable_loop.core.envelope import Envelope

Role = Literal["system", "user", "assistant", "tool"]
MetaModel = TypeVar("MetaModel", bound=BaseModel)


class ToolCall(BaseModel):
    """A tool invocation as the model emitted it; arguments stay raw JSON text."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    arguments: str = "{}"
    signature: str | None = Field(
        default=None,
        description="Opaque provider signature of the call (Gemini thoughtSignature), "
        "sent back verbatim on later requests",
    )


class Usage(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
        )

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


class Message(BaseModel):
    """Frozen: stored messages are parsed once and shared (the store's prefix cache)."""

    model_config = ConfigDict(frozen=True)

    role: Role
    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = Field(default=None, description="Tool name, for tool results")
    envelope: Envelope | None = Field(default=None, description="Tool result envelope")
    synthetic: bool = Field(default=False, description="Written by the loop, not a person/model")

    @property
    def from_person(self) -> bool:
        """A message the person wrote: a user message the loop did not write."""
        return self.role == "user" and not self.synthetic

    @classmethod
    def user(cls, text: str, *, synthetic: bool = False) -> Message:
        return cls(role="user", content=text, synthetic=synthetic)

    @classmethod
    def system(cls, text: str) -> Message:
        return cls(role="system", content=text)

    @classmethod
    def tool_result(cls, call_id: str, name: str, envelope: Envelope) -> Message:
        return cls(role="tool", tool_call_id=call_id, name=name, envelope=envelope)


@dataclass(frozen=True)
class StoredMessage:
    """One transcript row: the message, its seq and what the store keeps beside it."""

    seq: int
    message: Message
    meta: dict[str, JsonValue] = field(default_factory=dict)
    """The JSON object the store keeps beside the message; its shapes are the models of
    :mod:`durable_loop.core.reply_meta`, read with :meth:`meta_as`."""
    created_at: datetime | None = None

    def meta_as(self, model: type[MetaModel]) -> MetaModel:
        """The meta parsed as ``model`` (a :class:`~durable_loop.core.reply_meta.RowMeta`)."""
        return model.model_validate(self.meta)
