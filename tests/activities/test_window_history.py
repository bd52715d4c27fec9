"""The windowed transcript read sends exactly what a full read would, reading only the tail."""

from __future__ import annotations

import pytest

from durable_loop.activities.turn_history import TAIL_PAGE, window_history
from durable_loop.core.context_window import TranscriptItem, build_context, summary_message
from durable_loop.core.endpoint import ContextWindow
from durable_loop.core.envelope import Envelope
from durable_loop.core.messages import Message, StoredMessage, ToolCall
from durable_loop.core.reply_meta import SUMMARY_META_KEY
from durable_loop.core.request import transcript_items
from durable_loop.store import StoreConfig, open_store


def unit(turn: int, size: int) -> list[Message]:
    calls = [ToolCall(id=f"c{turn}_{i}", name="read", arguments='{"page": 1}') for i in range(2)]
    results = [
        Message.tool_result(c.id, "read", Envelope.success("x" * size + str(turn))) for c in calls
    ]
    return [
        Message.user(f"question {turn}"),
        Message(role="assistant", tool_calls=calls),
        *results,
        Message(role="assistant", content=f"answer {turn}"),
    ]


def full_items(rows: list[StoredMessage]) -> list[TranscriptItem]:
    return transcript_items(rows, [row.message for row in rows])


@pytest.fixture
async def store(tmp_path):
    store = open_store(StoreConfig.sqlite_file(tmp_path / "t.db"))
    rows = []
    for turn in range(60):
        for message in unit(turn, 300 + 37 * (turn % 5)):
            rows.append((len(rows), message, {}))
    summary_at = len(rows)
    rows.append((summary_at, summary_message("the first 20 turns"), {SUMMARY_META_KEY: 100}))
    for turn in range(60, 90):
        for message in unit(turn, 250):
            rows.append((len(rows), message, {}))
    await store.append("s", rows)
    yield store
    await store.close()


@pytest.mark.parametrize("budget", [50, 900, 5_000, 20_000, 60_000, 10_000_000])
@pytest.mark.parametrize("upto", [150, 300, 441])
async def test_windowed_read_keeps_what_a_full_read_keeps(store, budget, upto):
    window = ContextWindow(max_chars=budget)
    full = build_context(
        full_items(await store.read("s", upto_seq=upto)),
        system_prompt="be brief",
        window=window,
    )
    history, unread = await window_history(store, "s", upto, budget)
    windowed = build_context(full_items(history), system_prompt="be brief", window=window)
    assert windowed.messages == full.messages
    assert windowed.report.first_kept_seq == full.report.first_kept_seq
    assert windowed.report.summary_seq == full.report.summary_seq
    assert windowed.report.dropped + unread == full.report.dropped
    assert all(m.message.role != "tool" for m in history[:1])
    if budget <= 5_000 and upto > 2 * TAIL_PAGE:
        assert len(history) < upto // 2, "a small window reads only the tail"
