"""Plain and streamed requests map httpx failures to the same coded provider errors."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest
from temporalio.exceptions import ApplicationError

from durable_loop.activities.llm_stream import ChunkWriter, post_streaming
from durable_loop.activities.provider_http import post, unreachable
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.errors import ErrorCode
from durable_loop.core.providers import ProviderRequest, get_adapter
from durable_loop.core.retry import RetrySettings

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


def refused() -> httpx.ConnectError:
    err = httpx.ConnectError("All connection attempts failed")
    err.__cause__ = ConnectionRefusedError(111, "Connection refused")
    return err


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_refused_connection_is_unreachable_with_a_short_budget(streamed):
    with pytest.raises(ApplicationError) as caught:
        await send(failing_with(refused()), streamed)
    assert caught.value.type == ErrorCode.PROVIDER_UNREACHABLE
    assert caught.value.message.startswith("connection refused by http://provider.test/v1/")
    assert not caught.value.non_retryable
    assert caught.value.next_retry_delay == timedelta(seconds=0.5)


def test_the_unreachable_budget_ends_retries_on_its_last_attempt():
    budget = RetrySettings(initial_interval_s=0.5, maximum_attempts=3)
    endpoint = ENDPOINT.model_copy(update={"unreachable_retry": budget})
    second, third = (unreachable(endpoint, "http://x", n) for n in (2, 3))
    assert second.next_retry_delay == timedelta(seconds=1) and not second.non_retryable
    assert third.non_retryable and third.next_retry_delay is None
    unlimited = ENDPOINT.model_copy(update={"unreachable_retry": RetrySettings(maximum_attempts=0)})
    assert not unreachable(unlimited, "http://x", 50).non_retryable
