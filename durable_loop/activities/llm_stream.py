"""Streaming one LLM request: text deltas go to the ``stream_chunks`` table as they arrive
(batched), the events are reassembled into an ordinary response body for the usual parse.
Workflow history only ever sees the activity's summary, never a token fragment."""

from __future__ import annotations

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
    """Buffers deltas and writes a row every ``flush_chars`` characters or ``flush_s``."""

    def __init__(
        self,
        store: StreamStore,
        session_id: str,
        seq: int,
        attempt: int,
        *,
        flush_chars: int = 48,
        flush_s: float = 0.1,
    ) -> None:
        self.store, self.session_id, self.seq, self.attempt = store, session_id, seq, attempt
        self.flush_chars, self.flush_s = flush_chars, flush_s
        self.buffer: list[str] = []
        self.pieces: list[str] = []
        """Every delta so far (a cancelled request keeps what it had: ``llm_turn``)."""
        self.index = 0
        self.last_flush = time.monotonic()

    @property
    def text(self) -> str:
        return "".join(self.pieces)

    async def write(self, text: str) -> None:
        self.buffer.append(text)
        self.pieces.append(text)
        due = time.monotonic() - self.last_flush >= self.flush_s
        if due or sum(len(t) for t in self.buffer) >= self.flush_chars:
            await self._flush(done=False)

    async def close(self) -> None:
        await self._flush(done=True)

    async def _flush(self, *, done: bool) -> None:
        text = "".join(self.buffer)
        if not text and not done:
            return
        await self.store.append(
            self.session_id, self.seq, self.attempt, self.index, text, done=done
        )
        self.buffer, self.index, self.last_flush = [], self.index + 1, time.monotonic()


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
