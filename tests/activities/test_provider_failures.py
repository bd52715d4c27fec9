"""Plain and streamed requests map httpx failures to the same coded provider errors."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest
from temporalio.exceptions import ApplicationError

from durable_loop.activities.llm_stream import ChunkWriter, post_streaming
from durable_loop.activities.provider_http import post
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.errors import ErrorCode
from durable_loop.core.providers import ProviderRequest, get_adapter

ENDPOINT = LlmEndpoint(model="m", base_url="http://provider.test", timeout_s=5)
REQUEST = ProviderRequest(endpoint="/chat/completions", body={"model": "m"})


async def send(handler, streamed: bool) -> None:
    adapter = get_adapter(ENDPOINT.provider)
    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        if streamed:
            writer = ChunkWriter(None, "s", 1, 1)  # type: ignore[arg-type]  # never flushed
            await post_streaming(http, ENDPOINT, adapter, REQUEST, None, writer)
        else:
            await post(http, ENDPOINT, adapter, REQUEST, None)


def failing_with(err: Exception):
    def handler(request: httpx.Request) -> httpx.Response:
        raise err

    return handler


@pytest.mark.parametrize("streamed", [False, True])
@pytest.mark.parametrize(
    ("err", "begins"),
    [
        (
            httpx.ConnectTimeout("slow"),
            "provider.test (model m) did not answer within 5.0s (ConnectTimeout)",
        ),
        (httpx.ConnectError("refused"), "cannot reach http://provider.test/v1/chat/completions"),
    ],
)
async def test_transport_failures_are_retryable_and_unavailable(err, begins, streamed):
    with pytest.raises(ApplicationError) as caught:
        await send(failing_with(err), streamed)
    assert caught.value.type == ErrorCode.PROVIDER_UNAVAILABLE
    assert not caught.value.non_retryable and caught.value.message.startswith(begins)


@pytest.mark.parametrize("streamed", [False, True])
async def test_statuses_map_the_same_way_with_retry_after(streamed):
    def busy(request: httpx.Request) -> httpx.Response:
        return httpx.Response(429, headers={"retry-after": "3"}, text="slow down")

    def denied(request: httpx.Request) -> httpx.Response:
        return httpx.Response(401, text="no key")

    with pytest.raises(ApplicationError) as retried:
        await send(busy, streamed)
    assert retried.value.type == "HTTP_429" and not retried.value.non_retryable
    assert retried.value.next_retry_delay == timedelta(seconds=3)
    with pytest.raises(ApplicationError) as refused:
        await send(denied, streamed)
    assert refused.value.type == ErrorCode.PROVIDER_AUTH and refused.value.non_retryable
