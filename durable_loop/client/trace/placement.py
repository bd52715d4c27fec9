"""Where each trace entry goes among the messages and turns (pure).

Positions are (run index, event id) in the session's history. An entry belongs to the
message it names (a decision on one of its held calls, a cancel answered with its result),
else to the message whose span holds it: from its first turn to the first Update that gave
its final result (a later ``message_result`` only reads it again). Otherwise it stands
between messages, after the last one that began before it. Within its message it follows
the last turn before it.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence

from durable_loop.client.trace.entries import TraceEntry
from durable_loop.client.trace.models import MessageRow

Position = tuple[int, int]
"""(run index, event id)"""


def _spans(
    messages: Sequence[MessageRow],
    turn_at: Mapping[int, Position],
    answered_at: Mapping[str, Position],
) -> list[tuple[Position | None, Position | None]]:
    """(first, last) position of each message; None where it is not known."""
    spans: list[tuple[Position | None, Position | None]] = []
    for row in messages:
        turns = [turn_at[t] for t in row.session_turns if t in turn_at]
        end = answered_at.get(row.message_id) if row.message_id else None
        if end is None and turns:  # posted by Signal, or still running
            end = max(turns)
        spans.append((min(turns) if turns else end, end))
    return spans


def place_entries(
    entries: Sequence[TraceEntry],
    messages: Sequence[MessageRow],
    turn_at: Mapping[int, Position],
    answered_at: Mapping[str, Position],
) -> list[TraceEntry]:
    """``turn_at``: session turn -> position of its first LLM call; ``answered_at``:
    message id -> position of the first Update that gave its final result."""
    turns = sorted(turn_at.items(), key=lambda item: item[1])
    turn_positions = [p for _, p in turns]
    by_id = {row.message_id: i for i, row in enumerate(messages) if row.message_id}
    spans = _spans(messages, turn_at, answered_at)
    placed: list[TraceEntry] = []
    for entry in entries:
        at = (entry.run_index, entry.event_id)
        before = bisect_left(turn_positions, at)
        after_turn = turns[before - 1][0] if before else None
        message = by_id.get(entry.message_id) if entry.message_id else None
        if message is None:
            message = next(
                (
                    i
                    for i, (start, end) in enumerate(spans)
                    if start is not None and end is not None and start <= at <= end
                ),
                None,
            )
        after_message = None
        if message is None:
            began = [i for i, (start, _) in enumerate(spans) if start is not None and start < at]
            after_message = began[-1] if began else None
        placed.append(
            entry.model_copy(
                update={
                    "after_turn": after_turn,
                    "message": message,
                    "after_message": after_message,
                }
            )
        )
    return placed
