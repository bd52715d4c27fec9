"""The LLM activity: build one request from the stored transcript, call the provider, store
the reply, and return only a summary to the workflow.

The provider client's own retries are off; Temporal owns retries. Errors are classified:
408/409/429/5xx and timeouts retry (honouring Retry-After), other 4xx and unreadable
responses fail fast.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import timedelta

import httpx
from pydantic import JsonValue
from temporalio import activity
from temporalio.exceptions import ApplicationError

from durable_loop.activities.appends import write_appends
from durable_loop.activities.retry_after import parse_retry_after
from durable_loop.activities.store import StoredMessage, TranscriptStore
from durable_loop.toolcalling import names
from durable_loop.toolcalling.canonical_json import arguments_fingerprint, utf8_len
from durable_loop.toolcalling.contracts import LlmTurnInput, LlmTurnOutput, ToolCallSummary
from durable_loop.toolcalling.errors import ConfigError, ErrorCode
from durable_loop.toolcalling.messages import Message, Usage
from durable_loop.toolcalling.plan import PromptPlan
from durable_loop.toolcalling.providers import ProviderAdapter, ProviderFormatError, get_adapter
from durable_loop.toolcalling.providers.base import SNIPPET_LIMIT
from durable_loop.toolcalling.providers.openai_compat import loads_lenient
from durable_loop.toolcalling.registry import ToolRegistry

ERROR_SNIPPET = 400


class LlmActivities:
    def __init__(
        self,
        store: TranscriptStore,
        http: httpx.AsyncClient,
        registry: ToolRegistry,
        environ: Mapping[str, str],
    ) -> None:
        self.store = store
        self.http = http
        self.registry = registry
        self.environ = environ

    @activity.defn(name=names.LLM_TURN)
    async def llm_turn(self, inp: LlmTurnInput) -> LlmTurnOutput:
        session_id = inp.transcript.session_id
        await write_appends(self.store, session_id, inp.appends)
        stored = await self.store.get(session_id, inp.assistant_seq)
        if stored is not None:
            return summarize_reply(stored, inp, cached=True)
        endpoint = inp.endpoint
        try:
            adapter = get_adapter(endpoint.provider)
        except ConfigError as err:
            raise ApplicationError(
                str(err), type=ErrorCode.CONFIG_ERROR, non_retryable=True
            ) from None
        api_key = self._api_key(endpoint.api_key_env)
        history = await self.store.read(session_id, upto_seq=inp.assistant_seq)
        messages = [m.message for m in history]
        if inp.system_prompt:
            messages.insert(0, Message.system(inp.system_prompt))
        plan = self._plan(inp)
        fingerprint = plan.fingerprint(messages)
        request = adapter.build_request(plan, messages)
        url = f"{endpoint.base_url}{endpoint.api_prefix}{request.endpoint}"
        headers = adapter.auth_headers(api_key) if api_key else {}
        started = time.monotonic()
        try:
            response = await self.http.post(
                url, json=request.body, headers=headers, timeout=endpoint.timeout_s
            )
        except httpx.TimeoutException as err:
            raise ApplicationError(
                f"{endpoint.provider} did not answer within {endpoint.timeout_s}s "
                f"({type(err).__name__})",
                type=ErrorCode.PROVIDER_UNAVAILABLE,
            ) from None
        except httpx.TransportError as err:
            raise ApplicationError(
                f"cannot reach {url}: {type(err).__name__}: {err}",
                type=ErrorCode.PROVIDER_UNAVAILABLE,
            ) from None
        latency_ms = int((time.monotonic() - started) * 1000)
        raw = response.text
        if response.status_code >= 400:
            raise self._http_error(adapter, response, raw, api_key, url)
        try:
            reply = adapter.parse_response(loads_lenient(raw), raw)
        except ProviderFormatError as err:
            # Redact before cutting the snippet, so a key cut in half cannot slip through.
            began = _redact(raw, api_key)[:SNIPPET_LIMIT]
            raise ApplicationError(
                f"unreadable {endpoint.provider} response: {_redact(err.reason, api_key)}; "
                f"response began: {began!r}",
                type=ErrorCode.PROVIDER_BAD_RESPONSE,
                non_retryable=True,
            ) from None
        meta: dict[str, JsonValue] = {
            "turn": inp.turn,
            "model": endpoint.model,
            "provider": endpoint.provider,
            "finish_reason": reply.finish_reason,
            "latency_ms": latency_ms,
            "usage": reply.usage.model_dump(),
            "plan_fingerprint": fingerprint,
            "tools_sent": [t.name for t in plan.tools],
            "attempt": activity.info().attempt,
        }
        await self.store.append(session_id, [(inp.assistant_seq, reply.message, meta)])
        written = await self.store.get(session_id, inp.assistant_seq)
        assert written is not None
        return summarize_reply(written, inp, cached=False)

    def _api_key(self, env_name: str | None) -> str | None:
        if not env_name:
            return None
        value = self.environ.get(env_name, "").strip()
        if not value:
            raise ApplicationError(
                f"missing API key: set {env_name} in the worker's environment",
                type=ErrorCode.CONFIG_ERROR,
                non_retryable=True,
            )
        return value

    def _plan(self, inp: LlmTurnInput) -> PromptPlan:
        tools = self.registry.specs(inp.tool_names) if inp.send_tools else []
        options: dict[str, JsonValue] = dict(inp.request_overrides)
        if tools and inp.parallel_tool_calls is not None:
            options["parallel_tool_calls"] = inp.parallel_tool_calls
        return PromptPlan(
            model=inp.endpoint.model,
            session_id=inp.transcript.session_id,
            upto_seq=inp.transcript.upto_seq,
            tools=tools,
            tool_choice=inp.tool_choice if tools else None,
            llm_options=options,
        )

    def _http_error(
        self,
        adapter: ProviderAdapter,
        response: httpx.Response,
        raw: str,
        api_key: str | None,
        url: str,
    ) -> ApplicationError:
        verdict = adapter.classify_status(response.status_code, raw)
        snippet = " ".join(_redact(raw, api_key)[:ERROR_SNIPPET].split())
        message = f"HTTP {response.status_code} from {url}: {snippet}"
        if verdict.code == ErrorCode.PROVIDER_AUTH:
            message += " (check the API key variable configured for this endpoint)"
        delay = parse_retry_after(response.headers.get("retry-after"))
        return ApplicationError(
            message,
            type=verdict.code,
            non_retryable=not verdict.retryable,
            next_retry_delay=timedelta(seconds=delay)
            if delay is not None and verdict.retryable
            else None,
        )


def _redact(text: str, secret: str | None) -> str:
    return text.replace(secret, "***") if secret else text


def summarize_reply(stored: StoredMessage, inp: LlmTurnInput, *, cached: bool) -> LlmTurnOutput:
    message = stored.message
    text = message.content or ""
    text_bytes = utf8_len(text)
    truncated = text_bytes > inp.reply_inline_bytes
    if truncated:
        text = text.encode("utf-8")[: inp.reply_inline_bytes].decode("utf-8", errors="ignore")
    calls = []
    for index, call in enumerate(message.tool_calls):
        valid, digest = arguments_fingerprint(call.arguments)
        calls.append(
            ToolCallSummary(
                index=index,
                id=call.id,
                name=call.name,
                args_bytes=utf8_len(call.arguments),
                args_sha256=digest,
                args_valid_json=valid,
            )
        )
    meta = stored.meta
    usage = meta.get("usage")
    finish = meta.get("finish_reason")
    latency = meta.get("latency_ms")
    return LlmTurnOutput(
        assistant_seq=stored.seq,
        text=text if message.content is not None else None,
        text_bytes=text_bytes,
        text_truncated=truncated,
        finish_reason=finish if isinstance(finish, str) else None,
        tool_calls=calls,
        usage=Usage.model_validate(usage) if isinstance(usage, dict) else Usage(),
        latency_ms=latency if isinstance(latency, int) else 0,
        model=str(meta.get("model") or inp.endpoint.model),
        plan_fingerprint=str(meta.get("plan_fingerprint") or ""),
        cached=cached,
    )
