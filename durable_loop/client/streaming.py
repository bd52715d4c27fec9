"""Streaming a reply to a caller: send a message by Update and, while it runs, tail the
text the LLM activity writes to the store (``RuntimeConfig.stream_replies``).

Token fragments never enter workflow history: they travel through the store only, and
the Update still returns the whole RunResult at the end.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Literal

from pydantic import BaseModel
from temporalio.client import WorkflowHandle, WorkflowUpdateStage

from durable_loop.client.update_retry import message_update_id, new_message_id
from durable_loop.core import names
from durable_loop.core.contracts import RunResult, UserMessage
from durable_loop.core.typed_output import OutputSchema
from durable_loop.store.stream import StreamChunk, StreamStore

WAIT_S = 30.0
"""A wait for text ends this often even when nothing came (the loop just waits again)."""


class StreamEvent(BaseModel):
    """``text``: a piece of assistant text (``seq`` tells the turns of a message apart;
    a retried request starts again under a new ``attempt``); ``result``: the end."""

    kind: Literal["text", "result"]
    seq: int | None = None
    attempt: int | None = None
    text: str = ""
    result: RunResult | None = None


async def send_streaming(
    handle: WorkflowHandle,
    chunks: StreamStore,
    session_id: str,
    text: str,
    *,
    message_id: str | None = None,
    poll_s: float | None = None,
    output_schema: OutputSchema | None = None,
) -> AsyncIterator[StreamEvent]:
    """``poll_s``: how often to look for text when nothing wakes the reader (default: the
    store's ``poll_s``; see ``StreamStore.wait_for``)."""
    after = await chunks.last_id(session_id)
    message_id = message_id or new_message_id()
    update = await handle.start_update(
        names.UPDATE_SEND_MESSAGE,
        UserMessage(text=text, message_id=message_id, output_schema=output_schema),
        id=message_update_id(message_id, text),
        wait_for_stage=WorkflowUpdateStage.ACCEPTED,
        result_type=RunResult,
    )
    outcome = asyncio.ensure_future(update.result())
    waiting: asyncio.Future[list[StreamChunk]] | None = None
    try:
        while True:
            waiting = asyncio.ensure_future(
                chunks.wait_for(session_id, after, WAIT_S, poll_s=poll_s)
            )
            await asyncio.wait({outcome, waiting}, return_when=asyncio.FIRST_COMPLETED)
            if outcome.done():
                await stop_waiting(waiting)
                break
            for chunk in waiting.result():
                after = chunk.id
                if chunk.text:
                    yield text_event(chunk)
        for chunk in await chunks.read(session_id, after_id=after):  # nothing left behind
            after = chunk.id
            if chunk.text:
                yield text_event(chunk)
        yield StreamEvent(kind="result", result=outcome.result())
    finally:
        if waiting is not None:
            await stop_waiting(waiting)
        if not outcome.done():
            outcome.cancel()


def text_event(chunk: StreamChunk) -> StreamEvent:
    return StreamEvent(kind="text", seq=chunk.seq, attempt=chunk.attempt, text=chunk.text)


async def stop_waiting(future: asyncio.Future[list[StreamChunk]]) -> list[StreamChunk]:
    """Stop a wait; what it had already read is returned (the caller re-reads anyway)."""
    if not future.done():
        future.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        return await future
    return []
