"""One HTTP exchange with a provider, with every failure turned into a coded
``ApplicationError`` (retryable or not), shared by the LLM and summary activities.

The mapping from httpx failures to codes lives here once, for plain and streamed
(``llm_stream``) requests alike: :func:`provider_failures` for timeouts and connection
failures, :func:`http_error` for error statuses (with Retry-After)."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import timedelta

import httpx
from temporalio import activity
from temporalio.exceptions import ApplicationError

from durable_loop.activities.retry_after import parse_retry_after
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.errors import ConfigError, ErrorCode
from durable_loop.core.providers import (
    ProviderAdapter,
    ProviderErrorReply,
    ProviderFormatError,
    ProviderReply,
    ProviderRequest,
    get_adapter,
)
from durable_loop.core.providers.base import SNIPPET_LIMIT
from durable_loop.core.transforms.pipeline import Inbound

ERROR_SNIPPET = 400


def adapter_for(endpoint: LlmEndpoint) -> ProviderAdapter:
    try:
        return get_adapter(endpoint.provider)
    except ConfigError as err:
        raise ApplicationError(str(err), type=ErrorCode.CONFIG_ERROR, non_retryable=True) from None


def read_api_key(environ: Mapping[str, str], env_name: str | None) -> str | None:
    if not env_name:
        return None
    value = environ.get(env_name, "").strip()
    if not value:
        raise ApplicationError(
            f"missing API key: set {env_name} in the worker's environment",
            type=ErrorCode.CONFIG_ERROR,
            non_retryable=True,
        )
    return value


def redact(text: str, secret: str | None) -> str:
    return text.replace(secret, "***") if secret else text


def endpoint_url(endpoint: LlmEndpoint, request: ProviderRequest) -> str:
    return f"{endpoint.base_url}{endpoint.api_prefix}{request.endpoint}"


@contextmanager
def provider_failures(endpoint: LlmEndpoint, url: str) -> Iterator[None]:
    """Timeouts and connection failures of an exchange with ``url`` become retryable
    PROVIDER_UNAVAILABLE errors, a refused connection PROVIDER_UNREACHABLE on the
    endpoint's shorter ``unreachable_retry`` budget; coded errors raised inside pass
    through."""
    try:
        yield
    except httpx.ConnectError as err:
        if not connection_refused(err):
            raise unavailable(url, err) from None
        raise unreachable(endpoint, url, current_attempt()) from None
    except httpx.TimeoutException as err:
        raise ApplicationError(
            f"{endpoint.label()} did not answer within {endpoint.timeout_s}s "
            f"({type(err).__name__})",
            type=ErrorCode.PROVIDER_UNAVAILABLE,
        ) from None
    except httpx.TransportError as err:
        raise unavailable(url, err) from None


def unavailable(url: str, err: httpx.TransportError) -> ApplicationError:
    return ApplicationError(
        f"cannot reach {url}: {type(err).__name__}: {err}", type=ErrorCode.PROVIDER_UNAVAILABLE
    )


def connection_refused(err: BaseException) -> bool:
    seen: BaseException | None = err
    while seen is not None:
        if isinstance(seen, ConnectionRefusedError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def current_attempt() -> int:
    return activity.info().attempt if activity.in_activity() else 1


def unreachable(endpoint: LlmEndpoint, url: str, attempt: int) -> ApplicationError:
    """Nothing listens at the endpoint: retried only ``unreachable_retry.maximum_attempts``
    times in all (0: as long as the endpoint's retry policy allows), so a fallback model
    takes over within about a second instead of after the whole backoff."""
    budget = endpoint.unreachable_retry
    spent = budget.maximum_attempts != 0 and attempt >= budget.maximum_attempts
    delay = min(
        budget.initial_interval_s * budget.backoff_coefficient ** (attempt - 1),
        budget.maximum_interval_s,
    )
    return ApplicationError(
        f"connection refused by {url} (attempt {attempt})",
        type=ErrorCode.PROVIDER_UNREACHABLE,
        non_retryable=spent,
        next_retry_delay=None if spent else timedelta(seconds=delay),
    )


async def post(
    http: httpx.AsyncClient,
    endpoint: LlmEndpoint,
    adapter: ProviderAdapter,
    request: ProviderRequest,
    api_key: str | None,
) -> tuple[str, int]:
    """POST the request; return (raw body, latency ms) of a 2xx/3xx reply."""
    url = endpoint_url(endpoint, request)
    started = time.monotonic()
    with provider_failures(endpoint, url):
        response = await http.post(
            url,
            json=request.body,
            headers=adapter.request_headers(api_key),
            timeout=endpoint.timeout_s,
        )
    latency_ms = elapsed_ms(started)
    raw = response.text
    if response.status_code >= 400:
        raise http_error(adapter, response, raw, api_key, url)
    return raw, latency_ms


CONTEXT_HINT = (
    " (the messages and tool definitions are longer than the model's context: offer fewer "
    "tools, bound the history with the endpoint's context_window, or serve a longer context, "
    "e.g. durable-loop local-llm --ctx-size)"
)


def http_error(
    adapter: ProviderAdapter,
    response: httpx.Response,
    raw: str,
    api_key: str | None,
    url: str,
) -> ApplicationError:
    """An error status as the adapter classifies it (``HTTP_<status>`` retries, with the
    delay of Retry-After or of the error body; PROVIDER_AUTH / _BAD_REQUEST /
    _CONTEXT_EXCEEDED fail fast)."""
    verdict = adapter.classify_status(response.status_code, raw)
    # Redact before cutting the snippet, so a key cut in half cannot slip through.
    snippet = " ".join(redact(raw, api_key)[:ERROR_SNIPPET].split())
    message = f"HTTP {response.status_code} from {url}: {snippet}"
    if verdict.code == ErrorCode.PROVIDER_AUTH:
        message += " (check the API key variable configured for this endpoint)"
    elif verdict.code == ErrorCode.PROVIDER_CONTEXT_EXCEEDED:
        message += CONTEXT_HINT
    delay = parse_retry_after(response.headers.get("retry-after"))
    if delay is None:
        delay = verdict.retry_after_s
    return ApplicationError(
        message,
        type=verdict.code,
        non_retryable=not verdict.retryable,
        next_retry_delay=timedelta(seconds=delay)
        if delay is not None and verdict.retryable
        else None,
    )


def read_reply(
    adapter: ProviderAdapter,
    endpoint: LlmEndpoint,
    raw: str,
    api_key: str | None,
    inbound: Inbound,
) -> ProviderReply:
    """The reply as ``inbound`` reads it. Unreadable replies are non-retryable
    PROVIDER_BAD_RESPONSE errors quoting a bounded snippet; in-body errors keep the
    adapter's verdict."""
    try:
        return inbound.read(adapter, raw)
    except ProviderFormatError as err:
        began = redact(raw, api_key)[:SNIPPET_LIMIT]
        raise ApplicationError(
            f"unreadable response from {endpoint.label()}: {redact(err.reason, api_key)}; "
            f"response began: {began!r}",
            type=ErrorCode.PROVIDER_BAD_RESPONSE,
            non_retryable=True,
        ) from None
    except ProviderErrorReply as err:
        raise ApplicationError(
            redact(f"{endpoint.label()} replied with an error: {err.message}", api_key),
            type=err.code,
            non_retryable=not err.retryable,
        ) from None
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as err:
        # A shape no check above anticipated: still a coded, bounded failure.
        began = redact(raw, api_key)[:SNIPPET_LIMIT]
        raise ApplicationError(
            f"unreadable response from {endpoint.label()} "
            f"({type(err).__name__}: {redact(str(err), api_key)[:ERROR_SNIPPET]}); "
            f"response began: {began!r}",
            type=ErrorCode.PROVIDER_BAD_RESPONSE,
            non_retryable=True,
        ) from None


def elapsed_ms(started: float) -> int:
    """Whole milliseconds since ``started`` (a ``time.monotonic()``), rounded up: an exchange
    that took place never reads as 0 ms, however fast a local endpoint answers."""
    return math.ceil((time.monotonic() - started) * 1000)
