"""Each message's reply in the trace: the store's text when it was read (a result in
history may carry a cut preview), else the result's; bounded to ``REPLY_CHARS`` unless a
caller asks for it whole (pure)."""

from __future__ import annotations

from collections.abc import Mapping

from durable_loop.client.trace.arguments import bounded_text
from durable_loop.client.trace.models import BoundedText
from durable_loop.core.contracts import RunResult
from durable_loop.core.messages import StoredMessage

REPLY_CHARS = 300
"""Characters of a reply a trace shows by default."""


def reply_of(
    result: RunResult, stored: Mapping[int, StoredMessage], limit: int | None
) -> BoundedText | None:
    """``stored``: seq -> transcript row; ``limit=None``: the whole reply."""
    row = stored.get(result.reply_seq) if result.reply_seq is not None else None
    text = row.message.content if row is not None else None
    if text is None:
        text = result.reply
    if text is None:
        return None
    reply = bounded_text(text, limit)
    if result.reply_truncated and row is None:  # only history's preview of it
        return reply.model_copy(update={"truncated": True})
    return reply
