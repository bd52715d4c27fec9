"""Streaming one LLM request: text deltas go to the ``stream_chunks`` table as they arrive
(``ChunkWriter``), the events are reassembled into an ordinary response body for the usual
parse. Workflow history only ever sees the activity's summary, never a token fragment."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
from temporalio import activity
from temporalio.exceptions import ApplicationError

from durable_loop.activities.provider_http import (
    elapsed_ms,
    endpoint_url,
    http_error,
    provider_failures,
    redact,
)
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.errors import ErrorCode
from durable_loop.core.providers import ProviderAdapter, ProviderRequest
from durable_loop.core.providers.base import SNIPPET_LIMIT
from durable_loop.core.providers.openai_stream import ChunkAssembler
from durable_loop.store.stream import StreamStore


class ChunkWriter:
    """Writes each delta as soon as the previous write has finished; deltas that arrive
    while a write is in flight go together into the next row. So a row costs no waiting
    (a fixed batch interval added up to that interval to every token's latency), and a
    store slower than the stream gets fewer, larger rows instead of a growing queue."""

    def __init__(self, store: StreamStore, session_id: str, seq: int, attempt: int) -> None:
        self.store, self.session_id, self.seq, self.attempt = store, session_id, seq, attempt
        self.buffer: list[str] = []
        self.pieces: list[str] = []
        """Every delta so far (a cancelled request keeps what it had: ``llm_turn``)."""
        self.index = 0
        self.rows = 0
        self._writing: asyncio.Task[None] | None = None

    @property
    def text(self) -> str:
        return "".join(self.pieces)

    async def write(self, text: str) -> None:
        self.buffer.append(text)
        self.pieces.append(text)
        if self._writing is not None and self._writing.done():
            self._writing.result()  # a failed write fails the request here
            self._writing = None
        if self._writing is None:
            self._writing = asyncio.create_task(self._drain())

    async def flush(self) -> None:
        """Wait until every delta so far is in the store."""
        if self._writing is not None:
            writing, self._writing = self._writing, None
            await writing

    async def close(self) -> None:
        await self.flush()
        await self._append(done=True)

    async def _drain(self) -> None:
        while self.buffer:
            await self._append(done=False)

    async def _append(self, *, done: bool) -> None:
        text = "".join(self.buffer)
        self.buffer = []
        if not text and not done:
            return
        index, self.index = self.index, self.index + 1
        await self.store.append(self.session_id, self.seq, self.attempt, index, text, done=done)
        self.rows += 1


async def post_streaming(
    http: httpx.AsyncClient,
    endpoint: LlmEndpoint,
    adapter: ProviderAdapter,
    request: ProviderRequest,
    api_key: str | None,
    writer: ChunkWriter,
) -> tuple[str, int]:
    """POST with ``stream: true``; return (an equivalent non-streamed body, latency ms).

    A server that answers with plain JSON instead of events is read as such.
    """
    url = endpoint_url(endpoint, request)
    started = time.monotonic()
    with provider_failures(endpoint, url):
        async with http.stream(
            "POST",
            url,
            json=request.body,
            headers=adapter.request_headers(api_key),
            timeout=endpoint.timeout_s,
        ) as response:
            if response.status_code >= 400:
                raw = (await response.aread()).decode("utf-8", errors="replace")
                raise http_error(adapter, response, raw, api_key, url)
            if "text/event-stream" not in response.headers.get("content-type", ""):
                raw = (await response.aread()).decode("utf-8", errors="replace")
                return raw, elapsed_ms(started)
            assembler = ChunkAssembler()
            async for line in response.aiter_lines():
                data = line[5:].strip() if line.startswith("data:") else None
                if not data:
                    continue
                if data == "[DONE]":
                    break
                try:
                    event = json.loads(data)
                except ValueError:
                    raise ApplicationError(
                        f"unreadable stream event from {endpoint.label()}: "
                        f"{redact(data, api_key)[:SNIPPET_LIMIT]!r}",
                        type=ErrorCode.PROVIDER_BAD_RESPONSE,
                        non_retryable=True,
                    ) from None
                if isinstance(event, dict):
                    delta = assembler.feed(event)
                    if delta:
                        await writer.write(delta)
                        activity.heartbeat()
            await writer.close()
    return json.dumps(assembler.body()), elapsed_ms(started)
