"""The person's message at a seq and the conversation's last texts before it, read from the
store: what the router's steps and the conversation gate show the model."""

from __future__ import annotations

from collections.abc import Sequence

from temporalio.exceptions import ApplicationError

from durable_loop.core.errors import ErrorCode
from durable_loop.core.messages import StoredMessage
from durable_loop.store import TranscriptStore

CONTEXT_WINDOW = 40


def _texts(rows: Sequence[StoredMessage], keep: int) -> list[tuple[str, str]]:
    """The last ``keep`` user and assistant texts as (role, text): tool calls, tool
    results and the loop's synthetic messages left out."""
    texts = [
        (str(m.message.role), m.message.content or "")
        for m in rows
        if m.message.role in ("user", "assistant")
        and m.message.content
        and not m.message.tool_calls
        and not m.message.synthetic
    ]
    return texts[-keep:] if keep else []


async def read_context(
    store: TranscriptStore, session_id: str, before_seq: int, keep: int
) -> list[tuple[str, str]]:
    """The last ``keep`` texts stored before ``before_seq``."""
    if not keep:
        return []
    rows = await store.read(
        session_id, upto_seq=before_seq, from_seq=max(0, before_seq - CONTEXT_WINDOW)
    )
    return _texts(rows, keep)


async def read_question(
    store: TranscriptStore, session_id: str, user_seq: int, keep: int
) -> tuple[str, list[tuple[str, str]]]:
    """The message's text at ``user_seq``, and the last ``keep`` texts before it."""
    earlier = await store.read(
        session_id, upto_seq=user_seq + 1, from_seq=max(0, user_seq - CONTEXT_WINDOW)
    )
    if not earlier or earlier[-1].seq != user_seq or earlier[-1].message.role != "user":
        raise ApplicationError(
            f"no user message at seq {user_seq}", type=ErrorCode.TOOL_ERROR, non_retryable=True
        )
    return earlier[-1].message.content or "", _texts(earlier[:-1], keep)
