"""What the activities store beside a transcript message (the row's ``meta``), typed.

The store keeps one JSON object per row; these models are its shapes, one per kind of row.
Dumping one gives exactly the keys that row has always had: a field left at ``None`` is
left out, unless the model lists it in ``nullable`` (written as ``null``). Readers parse a
row's meta with :meth:`StoredMessage.meta_as <durable_loop.core.messages.StoredMessage.meta_as>`;
every field has a default and unknown keys are ignored, so any row parses as any model
(a tool result read as a summary simply has no ``summary_of``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    SerializerFunctionWrapHandler,
    field_serializer,
    model_serializer,
)

from durable_loop.core.context_window import ContextReport
from durable_loop.core.messages import Usage
from durable_loop.core.pipeline_trace import PipelineTrace
from durable_loop.core.router.contracts import AnswerMode

SUMMARY_META_KEY = "summary_of"
"""The key that marks a stored summary: it stands for the messages with seq below it."""


class RowMeta(BaseModel):
    """A row with nothing beside its message (the user's text, a refusal): ``{}``."""

    model_config = ConfigDict(frozen=True)

    nullable: ClassVar[frozenset[str]] = frozenset()
    """Fields written as ``null`` when ``None`` instead of being left out."""

    @model_serializer(mode="wrap")
    def _stored_keys(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        dumped: dict[str, Any] = handler(self)
        return {k: v for k, v in dumped.items() if v is not None or k in self.nullable}

    def to_json(self) -> dict[str, JsonValue]:
        """The JSON object the store keeps for this row."""
        dumped: dict[str, JsonValue] = self.model_dump(mode="json")
        return dumped


class LlmReplyMeta(RowMeta):
    """An assistant reply written by ``llm_turn``."""

    nullable: ClassVar[frozenset[str]] = frozenset({"finish_reason"})

    turn: int = 0
    model: str = ""
    provider: str = ""
    finish_reason: str | None = None
    latency_ms: int = 0
    usage: Usage = Field(default_factory=Usage)
    plan_fingerprint: str = ""
    tools_sent: list[str] | None = None
    """The tool names the request offered (empty: none); ``None`` on rows of other writers."""
    attempt: int = 0
    transforms: list[str] | None = None
    fallback_from: list[str] | None = None
    """The models that failed this turn before the one that answered."""
    streamed: bool | None = None
    """``True`` when the text was streamed; otherwise left out."""
    context: ContextReport | None = None
    """What the context window left out, when it left something out or sent a summary."""
    warnings: list[str] | None = None
    """What the reply suggests but the runtime did not do (a tool call written as text)."""
    repair: str | None = None
    """A call written by a named recovery (``shorten_oversized_arguments``, ...), not the
    model's own turn: the model's reply to the focused repair request became its arguments."""
    repair_of: str | None = None
    """The call id the repaired call replaces."""

    @field_serializer("context")
    def _context(self, report: ContextReport | None) -> dict[str, Any] | None:
        return None if report is None else report.model_dump(mode="json", exclude_defaults=True)


class SummaryMark(RowMeta):
    """The one key that makes a row a summary. Every request looks at every row it may
    send for it, so it is parsed on its own, not as a whole :class:`SummaryMeta`."""

    summary_of: int | None = None
    """It replaces the messages with seq below this (``SUMMARY_META_KEY``)."""


class SummaryMeta(SummaryMark):
    """A summary written by ``summarize_context``."""

    model: str = ""
    provider: str = ""
    usage: Usage = Field(default_factory=Usage)
    latency_ms: int = 0


class RouterReplyMeta(RowMeta):
    """The final reply of one router-pipeline message, written by ``router_answer``."""

    turn: int = 0
    model: str = ""
    strategy: str = "router"
    mode: AnswerMode | None = None
    latency_ms: int = 0
    usage: Usage = Field(default_factory=Usage)
    pipeline: PipelineTrace = Field(default_factory=PipelineTrace)


class ToolResultMeta(RowMeta):
    """A tool result written by ``run_tool``."""

    turn: int = 0
    duration_ms: int = 0
    duration_us: int | None = None
    output_bytes: int = 0
    attempt: int = 0
    idempotency_key: str = ""
    not_run: bool | None = None
    """``True`` when a check refused the call before the tool's code ran; else left out."""
    after_cancel: bool | None = None
    """``True`` when the tool finished after its call was cancelled; otherwise left out."""


class ReusedResultMeta(RowMeta):
    """A recorded tool result copied under a new call id (``appends``)."""

    reused_from: int | None = None
    """The seq of the result it copies; ``None`` on rows that are not copies."""
    deduplicated: bool | None = None
    """``True`` when the session-wide dedup answered, not the repeated-call guard (a repeat
    of an earlier turn of the same message); else left out."""
