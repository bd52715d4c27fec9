"""The counters a session carries from message to message (and across continue-as-new)."""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from durable_loop.core.circuit import BreakerState
    from durable_loop.core.contracts import TailEntry
    from durable_loop.core.messages import Usage


class SessionCursor:
    """Counters that outlive a message: transcript seq, global turn index, token usage."""

    def __init__(self, next_seq: int, turn_index: int, usage: Usage) -> None:
        self.next_seq = next_seq
        self.turn_index = turn_index
        self.usage = usage
        self.tail: list[TailEntry] = []
        self.dedup: dict[str, int] = {}
        self.breaker = BreakerState()
        self.summary_due: int | None = None
        """Transcript seq before which a context summary is due (see context_summary)."""

    def take_seq(self, count: int = 1) -> int:
        first = self.next_seq
        self.next_seq += count
        return first

    def remember(self, entry: TailEntry, keep: int) -> None:
        self.tail.append(entry)
        del self.tail[:-keep]
