"""Streaming a reply to a caller: send a message by Update and, while it runs, tail the
text the LLM activity writes to the store (``RuntimeConfig.stream_replies``).

Token fragments never enter workflow history: they travel through the store only, and
the Update still returns the whole RunResult at the end.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Literal

from pydantic import BaseModel
from temporalio.client import WorkflowHandle, WorkflowUpdateStage

from durable_loop.client.update_retry import message_update_id, new_message_id
from durable_loop.core import names
from durable_loop.core.contracts import RunResult, UserMessage
from durable_loop.core.typed_output import OutputSchema
from durable_loop.store.stream import StreamStore


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
    poll_s: float = 0.05,
    output_schema: OutputSchema | None = None,
) -> AsyncIterator[StreamEvent]:
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
    try:
        while True:
            finished = outcome.done()  # read once more after the end: nothing is left behind
            for chunk in await chunks.read(session_id, after_id=after):
                after = chunk.id
                if chunk.text:
                    yield StreamEvent(
                        kind="text", seq=chunk.seq, attempt=chunk.attempt, text=chunk.text
                    )
            if finished:
                yield StreamEvent(kind="result", result=outcome.result())
                return
            await asyncio.wait({outcome}, timeout=poll_s)
    finally:
        if not outcome.done():
            outcome.cancel()
