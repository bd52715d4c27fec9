"""Which turns answered which user message, and how each message ended (pure).

A message's turns are the LLM turns between its user message and the next one in the
transcript. Results (the ``send_message`` Updates' ``RunResult``s, in the order the
session answered them) are matched to those messages in order: by ``session_turns``
when the result carries them, else by position. A message that ended without a turn
(``BUDGET_EXCEEDED``) has a result but no turn, and, without the store, no text either.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from durable_loop.client.trace.models import MessageRow, TurnRow
from durable_loop.core.contracts import RunResult


@dataclass
class _Message:
    text: str | None
    turns: list[int] = field(default_factory=list)


def message_rows(
    turns: Sequence[TurnRow], users: Mapping[int, str], results: Sequence[RunResult]
) -> list[MessageRow]:
    """``users``: user message seq -> preview; ``results`` in the order they completed."""
    seqs = sorted(users)
    messages = [_Message(users[seq]) for seq in seqs]
    before_any = _Message(None)
    for turn in turns:
        position = bisect_left(seqs, turn.assistant_seq) - 1
        (messages[position] if position >= 0 else before_any).turns.append(turn.turn)
    if before_any.turns:
        messages.insert(0, before_any)
    rows: list[MessageRow] = []
    next_open = 0
    for result in results:
        if result.turns or result.session_turns:
            found = next(
                (
                    k
                    for k in range(next_open, len(messages))
                    if messages[k].turns and _answered_by(messages[k], result)
                ),
                None,
            )
            if found is None:
                rows.append(_row(None, result))
                continue
            rows.extend(_row(m, None) for m in messages[next_open:found])
            rows.append(_row(messages[found], result))
            next_open = found + 1
        elif next_open < len(messages) and not messages[next_open].turns:
            rows.append(_row(messages[next_open], result))
            next_open += 1
        else:
            rows.append(_row(None, result))
    rows.extend(_row(m, None) for m in messages[next_open:])
    return rows


def _answered_by(message: _Message, result: RunResult) -> bool:
    return not result.session_turns or not set(result.session_turns).isdisjoint(message.turns)


def _row(message: _Message | None, result: RunResult | None) -> MessageRow:
    turns = message.turns if message else list(result.session_turns if result else [])
    return MessageRow(
        message_id=result.message_id if result else None,
        user_text=message.text if message else None,
        status=result.status if result else None,
        error=result.error if result else None,
        session_turns=turns,
        output_corrections=result.output_corrections if result else None,
    )
