"""What a new session takes over from copied transcript rows: where a fork cuts, and the
carried state (counters, usage, tail) the session workflow starts from, the same shape a
run hands the next across continue-as-new."""

from __future__ import annotations

from durable_loop.core.contracts import CarriedState, TailEntry
from durable_loop.core.errors import DurableLoopError, ErrorCode
from durable_loop.core.messages import Usage
from durable_loop.core.outcome import preview
from durable_loop.core.reply_meta import LlmReplyMeta
from durable_loop.store.session_copy import RowCopy


def turn_of(row: RowCopy) -> int:
    """The session turn an assistant reply row answers (0 for every other row)."""
    if row.role != "assistant":
        return 0
    turn = row.meta.get("turn")
    return turn if isinstance(turn, int) else 0


def fork_cut(rows: list[RowCopy], turn: int) -> int:
    """The seq below which rows belong to a fork at ``turn``: every row up to turn
    ``turn``'s reply and the tool results answering it; nothing of a later turn or of the
    next message. Raises TURN_OUT_OF_RANGE for a turn the rows do not have."""
    turns = [turn_of(row) for row in rows]
    last = max(turns, default=0)
    if turn < 1 or turn not in turns:
        have = f"turns 1 to {last}" if last else "no turns"
        raise DurableLoopError(
            ErrorCode.TURN_OUT_OF_RANGE, f"no turn {turn}: the session has {have}"
        )
    end = max(i for i, t in enumerate(turns) if t == turn) + 1
    while end < len(rows) and rows[end].role == "tool":
        end += 1
    return rows[end].seq if end < len(rows) else rows[-1].seq + 1


def carried_from(rows: list[RowCopy], tail_keep: int) -> CarriedState:
    """The state a session continues from after ``rows`` (oldest first)."""
    usage = Usage()
    for row in rows:
        if turn_of(row):
            usage = usage + LlmReplyMeta.model_validate(row.meta).usage
    tail = [
        TailEntry(
            seq=row.seq,
            role=row.role,
            preview=preview(_text(row)),
            tool_names=_tool_names(row),
        )
        for row in rows[-tail_keep:]
    ]
    return CarriedState(
        next_seq=rows[-1].seq + 1 if rows else 0,
        turn_index=max((turn_of(row) for row in rows), default=0),
        messages_done=sum(1 for row in rows if _asked(row)),
        run_index=0,
        usage=usage,
        tail=tail,
    )


def _asked(row: RowCopy) -> bool:
    return row.role == "user" and not row.message.get("synthetic", False)


def _text(row: RowCopy) -> str | None:
    content = row.message.get("content")
    return content if isinstance(content, str) else None


def _tool_names(row: RowCopy) -> list[str]:
    calls = row.message.get("tool_calls")
    if not isinstance(calls, list):
        return []
    return [str(c["name"]) for c in calls if isinstance(c, dict) and "name" in c]
