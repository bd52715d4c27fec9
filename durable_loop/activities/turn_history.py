"""Reading what one LLM request may carry from the transcript store, without reading the
whole transcript when a context window bounds it."""

from __future__ import annotations

from durable_loop.core.activity_contracts import LlmTurnInput
from durable_loop.core.context_window import message_chars
from durable_loop.core.messages import StoredMessage
from durable_loop.core.request import TurnHistory, covers
from durable_loop.store import TranscriptStore

TAIL_PAGE = 64


async def window_history(
    store: TranscriptStore, session_id: str, upto_seq: int, budget_chars: int
) -> tuple[list[StoredMessage], int]:
    """What a context window of ``budget_chars`` can keep, without reading the whole
    transcript: the newest whole units (a tool result is never the oldest row read) holding
    more than the budget, plus the newest older summary. Returns the messages, oldest first,
    and how many older ones were not read (they would all be left out).

    Reading everything made each LLM turn cost O(transcript): at 5,000 turns (20,000
    messages) about 2 s of store reads and parsing per call (bench/history_per_turn.py).
    """
    tail: list[StoredMessage] = []
    chars = 0
    cursor = upto_seq
    while True:
        page = await store.read_newest(session_id, cursor, TAIL_PAGE)
        tail.extend(page)
        chars += sum(message_chars(m.message) for m in page)
        if len(page) < TAIL_PAGE:
            return list(reversed(tail)), 0
        cursor = page[-1].seq
        if chars > budget_chars and tail[-1].message.role != "tool":
            break
    oldest = tail[-1].seq
    older = [m for m in await store.read_role(session_id, "system", oldest) if covers(m)]
    newest = max([m for m in tail if covers(m)] + older[-1:], key=lambda m: m.seq, default=None)
    covered = min(covers(newest), oldest) if newest else 0
    # What build_context would report as dropped: older rows the summary does not cover.
    unread = await store.count(session_id, oldest) - await store.count(session_id, covered)
    unread -= sum(1 for m in older if m.seq >= covered)
    return older[-1:] + list(reversed(tail)), unread


async def turn_history(store: TranscriptStore, inp: LlmTurnInput) -> TurnHistory:
    """The transcript before the reply's seq, and the reply itself if it exists. Without a
    context window both come from one read (the reply is the row at ``assistant_seq``)."""
    session_id, seq = inp.transcript.session_id, inp.assistant_seq
    window = inp.endpoint.context_window
    budget = window.budget_chars() if window else None
    if budget is None:
        rows = await store.read(session_id, upto_seq=seq + 1)
        if rows and rows[-1].seq == seq:
            return TurnHistory(messages=rows[:-1], unread=0, reply=rows[-1])
        return TurnHistory(messages=rows, unread=0, reply=None)
    reply = await store.get(session_id, seq)
    if reply is not None:
        return TurnHistory(messages=[], unread=0, reply=reply)
    messages, unread = await window_history(store, session_id, seq, budget)
    return TurnHistory(messages=messages, unread=unread, reply=None)
