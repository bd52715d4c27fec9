"""Sending a message and following it while it runs (``SessionClient.send_with_progress``):
where the session stood before, then :func:`follow_message` until the result."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from contextlib import aclosing
from typing import Any, Protocol

from temporalio.service import RPCError

from durable_loop.client.progress import Progress, follow_message
from durable_loop.client.typed_output import message_schema
from durable_loop.core.config import SessionSettings
from durable_loop.core.contracts import RunResult, SessionStatus, TranscriptTail
from durable_loop.core.proposals import PendingProposal
from durable_loop.core.typed_output import OutputSchema
from durable_loop.store.stream import StreamStore


class MessageSession(Protocol):
    """What following a message asks of the session client."""

    def send(
        self,
        session_id: str,
        text: str,
        *,
        message_id: str | None = ...,
        interrupt: bool = ...,
        output_schema: OutputSchema | None = ...,
    ) -> Awaitable[RunResult]: ...

    def start_and_send(
        self,
        session_id: str,
        settings: SessionSettings,
        text: str,
        *,
        message_id: str | None = ...,
        interrupt: bool = ...,
        output_schema: OutputSchema | None = ...,
    ) -> Awaitable[RunResult]: ...

    def status(self, session_id: str) -> Awaitable[SessionStatus]: ...

    def tail(self, session_id: str, limit: int = ...) -> Awaitable[TranscriptTail]: ...

    def pending_proposals(self, session_id: str) -> Awaitable[list[PendingProposal]]: ...


class MessageProgress:
    def __init__(self, session: MessageSession) -> None:
        self.session = session

    async def send_with_progress(
        self,
        session_id: str,
        text: str,
        *,
        settings: SessionSettings | None = None,
        message_id: str | None = None,
        poll_s: float = 0.25,
        chunks: StreamStore | None = None,
        interrupt: bool = False,
        output_schema: OutputSchema | None = None,
        output_type: type[Any] | None = None,
    ) -> AsyncIterator[Progress]:
        """Send (update-with-start when ``settings`` are given) and yield progress while
        the Update runs, by polling the ``transcript_tail`` and ``proposals`` Queries and,
        with ``chunks`` (the worker's store) and ``stream_replies`` on, the reply text as
        it is generated; the last event carries the ``RunResult``."""
        session = self.session
        try:
            seen_seq = (await session.status(session_id)).next_seq - 1
        except RPCError:
            if settings is None:
                raise  # NOT_FOUND: no such session and nothing to start it with
            seen_seq = -1
        seen_proposals = {p.proposal_id for p in await self._pending_or_none(session_id)}
        after_chunk = await chunks.last_id(session_id) if chunks is not None else 0
        typed = message_schema(output_schema, output_type)
        if settings is None:
            call = session.send(
                session_id, text, message_id=message_id, interrupt=interrupt, output_schema=typed
            )
        else:
            call = session.start_and_send(
                session_id,
                settings,
                text,
                message_id=message_id,
                interrupt=interrupt,
                output_schema=typed,
            )
        events = follow_message(
            asyncio.ensure_future(call),
            session_id=session_id,
            tail=lambda: session.tail(session_id, limit=100),
            pending=lambda: self._pending_or_none(session_id),
            seen_seq=seen_seq,
            seen_proposals=seen_proposals,
            chunks=chunks,
            after_chunk=after_chunk,
            poll_s=poll_s,
        )
        async with aclosing(events):
            async for event in events:
                yield event

    async def _pending_or_none(self, session_id: str) -> list[PendingProposal]:
        try:
            return await self.session.pending_proposals(session_id)
        except RPCError:
            return []  # not started yet (update-with-start)
