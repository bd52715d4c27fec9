"""Typed row meta dumps exactly the JSON the store has always kept, and parses it back."""

from __future__ import annotations

import json

import pytest

from durable_loop.core.context_window import ContextReport
from durable_loop.core.envelope import Envelope
from durable_loop.core.messages import Message, StoredMessage, Usage
from durable_loop.core.pipeline_trace import PipelineTrace
from durable_loop.core.reply_meta import (
    SUMMARY_META_KEY,
    LlmReplyMeta,
    ReusedResultMeta,
    RouterReplyMeta,
    RowMeta,
    SummaryMeta,
    ToolResultMeta,
)

USAGE = Usage(input_tokens=10, output_tokens=3)
REPORT = ContextReport(budget_chars=320, used_chars=300, dropped=2, dropped_seqs=[0, 1])


def stored_json(meta: dict) -> str:
    """As the store writes it (``TranscriptStore``): key order matters for byte equality."""
    return json.dumps(meta, separators=(",", ":"))


CASES = [
    (
        LlmReplyMeta(
            turn=1,
            model="m",
            provider="openai",
            finish_reason=None,
            latency_ms=12,
            usage=USAGE,
            plan_fingerprint="abc",
            tools_sent=[],
            attempt=1,
        ),
        {
            "turn": 1,
            "model": "m",
            "provider": "openai",
            "finish_reason": None,
            "latency_ms": 12,
            "usage": USAGE.model_dump(),
            "plan_fingerprint": "abc",
            "tools_sent": [],
            "attempt": 1,
        },
    ),
    (
        LlmReplyMeta(
            turn=2,
            model="m",
            provider="openai",
            finish_reason="tool_calls",
            latency_ms=5,
            usage=USAGE,
            plan_fingerprint="def",
            tools_sent=["add"],
            attempt=2,
            transforms=["strip_nulls"],
            fallback_from=["primary"],
            streamed=True,
            context=REPORT,
        ),
        {
            "turn": 2,
            "model": "m",
            "provider": "openai",
            "finish_reason": "tool_calls",
            "latency_ms": 5,
            "usage": USAGE.model_dump(),
            "plan_fingerprint": "def",
            "tools_sent": ["add"],
            "attempt": 2,
            "transforms": ["strip_nulls"],
            "fallback_from": ["primary"],
            "streamed": True,
            "context": REPORT.model_dump(mode="json", exclude_defaults=True),
        },
    ),
    (
        SummaryMeta(summary_of=7, model="m", provider="openai", usage=USAGE, latency_ms=3),
        {
            SUMMARY_META_KEY: 7,
            "model": "m",
            "provider": "openai",
            "usage": USAGE.model_dump(),
            "latency_ms": 3,
        },
    ),
    (
        RouterReplyMeta(
            turn=1,
            model="m",
            mode="summarize",
            latency_ms=4,
            usage=USAGE,
            pipeline=PipelineTrace(choice="call_tool", tool="add", router_ms=2),
        ),
        {
            "turn": 1,
            "model": "m",
            "strategy": "router",
            "mode": "summarize",
            "latency_ms": 4,
            "usage": USAGE.model_dump(),
            "pipeline": PipelineTrace(choice="call_tool", tool="add", router_ms=2).model_dump(
                mode="json"
            ),
        },
    ),
    (
        ToolResultMeta(turn=1, duration_ms=8, output_bytes=20, attempt=1, idempotency_key="w:c:2"),
        {
            "turn": 1,
            "duration_ms": 8,
            "output_bytes": 20,
            "attempt": 1,
            "idempotency_key": "w:c:2",
        },
    ),
    (ReusedResultMeta(reused_from=2), {"reused_from": 2}),
    (ReusedResultMeta(reused_from=2, deduplicated=True), {"reused_from": 2, "deduplicated": True}),
    (RowMeta(), {}),
]


@pytest.mark.parametrize(("meta", "expected"), CASES)
def test_typed_meta_dumps_the_stored_json_and_reads_it_back(meta, expected):
    assert stored_json(meta.to_json()) == stored_json(expected)
    row = StoredMessage(seq=1, message=Message.user("x"), meta=json.loads(stored_json(expected)))
    assert row.meta_as(type(meta)) == meta


def test_any_row_parses_as_any_meta_with_defaults():
    tool_row = StoredMessage(
        seq=3,
        message=Message.tool_result("c", "add", Envelope.success(3)),
        meta=ToolResultMeta(turn=1, output_bytes=1).to_json(),
    )
    assert tool_row.meta_as(SummaryMeta).summary_of is None
    assert tool_row.meta_as(ReusedResultMeta).reused_from is None
    assert tool_row.meta_as(LlmReplyMeta).tools_sent is None
    assert StoredMessage(seq=0, message=Message.user("x")).meta_as(LlmReplyMeta).usage == Usage()
