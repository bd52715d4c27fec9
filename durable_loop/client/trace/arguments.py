"""Each call's arguments in the trace, read from the store (history keeps only their size
and digest): the assistant message at a turn's ``assistant_seq`` holds the calls as the
model emitted them. Bounded to ``ARGS_CHARS`` unless a caller asks for them whole."""

from __future__ import annotations

from collections.abc import Sequence

from durable_loop.client.trace.models import BoundedText, CallArguments, Trace
from durable_loop.core.messages import StoredMessage

ARGS_CHARS = 200
"""Characters of a call's arguments a trace shows by default."""


def bounded_text(raw: str, limit: int | None) -> BoundedText:
    """``limit=None``: the whole text."""
    if limit is None or len(raw) <= limit:
        return BoundedText(text=raw, chars=len(raw))
    return BoundedText(text=raw[:limit], chars=len(raw), truncated=True)


def bounded(raw: str, limit: int | None) -> CallArguments:
    return CallArguments.model_validate(bounded_text(raw, limit).model_dump())


def stored_arguments(
    stored: Sequence[StoredMessage], limit: int | None
) -> dict[tuple[int, str], CallArguments]:
    """(assistant seq, call id) -> the call's arguments, for every stored assistant call."""
    return {
        (m.seq, call.id): bounded(call.arguments, limit)
        for m in stored
        if m.message.role == "assistant"
        for call in m.message.tool_calls
    }


def with_arguments(trace: Trace, stored: Sequence[StoredMessage], limit: int | None) -> Trace:
    """The trace with each call's arguments filled in from ``stored`` (where found)."""
    found = stored_arguments(stored, limit)
    if not found:
        return trace
    turns = [
        turn.model_copy(
            update={
                "calls": [
                    call.model_copy(
                        update={"arguments": found.get((turn.assistant_seq, call.call_id))}
                    )
                    for call in turn.calls
                ]
            }
        )
        for turn in trace.turns
    ]
    return trace.model_copy(update={"turns": turns})


def arguments_line(arguments: BoundedText) -> str:
    """One line: whitespace collapsed; the whole length when cut."""
    flat = " ".join(arguments.text.split())
    return f"{flat}… ({arguments.chars} chars)" if arguments.truncated else flat
