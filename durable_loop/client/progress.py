"""Following one message while it runs: transcript entries, new proposals, reply text as it
is generated, then the result (``SessionClient.send_with_progress``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Literal

from pydantic import BaseModel, Field

from durable_loop.client.streaming import StreamEvent, stop_waiting, text_event
from durable_loop.core.contracts import RunResult, TailEntry, TranscriptTail
from durable_loop.core.proposals import PendingProposal
from durable_loop.store.stream import StreamChunk, StreamStore


class Progress(BaseModel):
    """One event while a message runs: a new transcript entry (tool calls and results as
    they happen), a new pending proposal, or the final result (always last)."""

    kind: Literal["entry", "proposal", "text", "result"]
    entry: TailEntry | None = None
    proposal: PendingProposal | None = None
    text: StreamEvent | None = Field(
        default=None, description="Assistant text as it is generated (stream_replies)"
    )
    result: RunResult | None = None


async def follow_message(
    task: asyncio.Task[RunResult],
    *,
    session_id: str,
    tail: Callable[[], Awaitable[TranscriptTail]],
    pending: Callable[[], Awaitable[list[PendingProposal]]],
    seen_seq: int,
    seen_proposals: set[str],
    chunks: StreamStore | None,
    after_chunk: int,
    poll_s: float,
) -> AsyncGenerator[Progress, None]:
    """Events of the message ``task`` is sending: text as soon as it is written
    (``StreamStore.wait_for``), the ``tail`` and ``pending`` Queries every ``poll_s``, then
    the result. Closing the iterator cancels ``task``."""
    loop = asyncio.get_running_loop()
    reading: asyncio.Task[list[StreamChunk]] | None = None
    try:
        while True:
            next_poll = loop.time() + poll_s
            while not task.done() and (left := next_poll - loop.time()) > 0:
                if chunks is None:
                    await asyncio.wait({task}, timeout=left)
                    continue
                reading = asyncio.create_task(chunks.wait_for(session_id, after_chunk, left))
                await asyncio.wait({task, reading}, return_when=asyncio.FIRST_COMPLETED)
                for chunk in await stop_waiting(reading):
                    after_chunk = chunk.id
                    if chunk.text:
                        yield Progress(kind="text", text=text_event(chunk))
                reading = None
            finished = task.done()  # read once more after the end: nothing is left behind
            for chunk in await chunks.read(session_id, after_id=after_chunk) if chunks else []:
                after_chunk = chunk.id
                if chunk.text:
                    yield Progress(kind="text", text=text_event(chunk))
            for entry in (await tail()).entries:
                if entry.seq > seen_seq:
                    seen_seq = entry.seq
                    yield Progress(kind="entry", entry=entry)
            for proposal in await pending():
                if proposal.proposal_id not in seen_proposals:
                    seen_proposals.add(proposal.proposal_id)
                    yield Progress(kind="proposal", proposal=proposal)
            if finished:
                yield Progress(kind="result", result=task.result())
                return
    finally:
        if reading is not None:
            await stop_waiting(reading)
        task.cancel()
