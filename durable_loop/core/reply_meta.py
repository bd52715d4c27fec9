"""What the activities store beside a transcript message (the row's ``meta``), typed.

The store keeps one JSON object per row; these models are its shapes, one per kind of row.
Dumping one gives exactly the keys that row has always had: a field left at ``None`` is
left out, unless the model lists it in ``nullable`` (written as ``null``). Readers parse a
row's meta with :meth:`StoredMessage.meta_as <durable_loop.core.messages.StoredMessage.meta_as>`;
every field has a default and unknown keys are ignored, so any row parses as any model
(a tool result read as a summary simply has no ``summary_of``).
"""

from __future__ import annotations

from collections.abc import Sequence
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

from durable_loop.core.canonical_json import canonical_dumps, sha256_hex
from durable_loop.core.context_window import ContextReport
from durable_loop.core.messages import StoredMessage, Usage
from durable_loop.core.pipeline_trace import PipelineTrace
from durable_loop.core.router.contracts import AnswerMode
from durable_loop.core.tools import ToolSpec

SUMMARY_META_KEY = "summary_of"
"""The key that marks a stored summary: it stands for the messages with seq below it."""
TOOLS_DIGEST_KEY = "tools_digest"
TOOLS_DIGEST_CHARS = 16


def _unset(value: object) -> bool:
    return value is None


class OfferedTool(BaseModel):
    """One tool as a request offered it (after masking and tool transforms): what a replay
    needs to offer it again, and the join of its model-facing and its own name."""

    model_config = ConfigDict(frozen=True)

    name: str
    original_name: str | None = Field(default=None, exclude_if=_unset)
    description: str = ""
    parameters: dict[str, JsonValue] = Field(default_factory=dict)

    @classmethod
    def of(cls, spec: ToolSpec) -> OfferedTool:
        return cls(
            name=spec.name,
            original_name=spec.original_name,
            description=spec.description,
            parameters=spec.parameters,
        )


def tools_digest(tools: Sequence[OfferedTool]) -> str:
    """A short sha256 of the offered schemas, in order: equal sets, equal digests."""
    dumped: list[JsonValue] = [t.model_dump(mode="json") for t in tools]
    return sha256_hex(canonical_dumps(dumped))[:TOOLS_DIGEST_CHARS]


def offered_tools(
    specs: Sequence[ToolSpec], earlier: Sequence[StoredMessage]
) -> tuple[str | None, list[OfferedTool] | None]:
    """``tools_digest`` and ``tool_schemas`` of a reply that offered ``specs``. The schemas
    are written once per distinct set: left out when a row in ``earlier`` (the rows the
    request read) carries the same digest, since the first row with a digest always
    carries its schemas. Every reply that offers the set carries its digest, so a context
    window reading only the newest rows writes a set again only when they hold no earlier
    reply offering it; that costs store bytes, never history bytes (meta is not in
    history)."""
    if not specs:
        return None, None
    offered = [OfferedTool.of(spec) for spec in specs]
    digest = tools_digest(offered)
    seen = any(row.meta.get(TOOLS_DIGEST_KEY) == digest for row in earlier)
    return digest, None if seen else offered


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
    tools_digest: str | None = None
    """The digest of the offered tools' schemas (:func:`tools_digest`); none offered: left
    out."""
    tool_schemas: list[OfferedTool] | None = None
    """The offered tools' schemas, on the first row of the transcript with this digest."""
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
