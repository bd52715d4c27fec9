"""Garbage into every provider adapter: a reply, or ProviderFormatError / ProviderErrorReply.

Bodies are mostly near misses (valid replies with subtrees replaced or removed), plus
random JSON and non-JSON text. Every reply an adapter returns must be storable, and every
adapter must build a sendable request from any stored transcript.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from temporalio.exceptions import ApplicationError

from durable_loop.activities.provider_http import read_reply
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.errors import ErrorCode
from durable_loop.core.messages import Message, ToolCall
from durable_loop.core.plan import PromptPlan
from durable_loop.core.providers import (
    ADAPTERS,
    ProviderErrorReply,
    ProviderFormatError,
)
from durable_loop.core.providers.base import loads_lenient
from durable_loop.core.tools import ToolSpec
from durable_loop.core.transforms.inbound import InboundContext
from durable_loop.core.transforms.names import RESPONSE_TRANSFORMS, TransformSet
from durable_loop.core.transforms.pipeline import Inbound
from durable_loop.store.transcript import message_json
from durable_loop.testing import reply, reply_anthropic, reply_gemini
from tests.hostile.budget import fuzz, hit
from tests.hostile.strategies import (
    JSON_VALUES,
    NASTY_TEXT,
    RAW_ARGUMENTS,
    SMALL_VALUES,
    TEXT,
    body_text,
    mutated,
)

PROVIDERS = ["openai", "anthropic", "gemini"]
KNOWN_CODES = {str(code) for code in ErrorCode} | {"HTTP_408", "HTTP_409", "HTTP_429", "HTTP_529"}
CONTEXT = InboundContext(call_id_prefix="7", tool_names=["add", "search"])


ENVELOPE_DATA = SMALL_VALUES


@functools.cache
def valid_bodies(provider: str) -> list[Any]:
    args = {"a": 1, "b": "two", "nested": {"list": [1, 2.5, None]}}
    if provider == "anthropic":
        replies = [
            reply_anthropic.text("hello"),
            reply_anthropic.tool_calls(("add", args), ("search", {}), content="thinking"),
            reply_anthropic.error(529, "overloaded_error"),
        ]
    elif provider == "gemini":
        replies = [
            reply_gemini.text("hello"),
            reply_gemini.function_calls(("add", args), ("search", {}, "id1"), signature="sig"),
            reply_gemini.blocked(),
        ]
    else:
        replies = [
            reply.text("hello"),
            reply.tool_calls(("add", args), ("search", "{broken"), content="thinking"),
        ]
    bodies: list[Any] = [r.body for r in replies]
    if provider == "openai":
        legacy = json.loads(json.dumps(bodies[0]))
        legacy["choices"][0]["message"]["function_call"] = {"name": "add", "arguments": "{}"}
        bodies.append(legacy)
        text_call = json.loads(json.dumps(bodies[0]))
        text_call["choices"][0]["message"]["content"] = (
            '<tool_call>{"name": "add", "arguments": {"a": 1}}</tool_call> '
            '```json\n{"name": "search", "arguments": {}}\n```'
        )
        bodies.append(text_call)
    return bodies


@functools.cache
def response_text(provider: str) -> st.SearchStrategy[str]:
    """Near misses of valid replies (most), random JSON, truncated replies, non-JSON."""
    valid = st.sampled_from(valid_bodies(provider))
    return st.one_of(
        valid.flatmap(mutated).map(body_text),
        valid.flatmap(mutated).map(body_text),
        valid.flatmap(mutated).map(body_text),
        JSON_VALUES.map(body_text),
        st.builds(_cut, valid.map(body_text), st.floats(0, 1)),
        TEXT,
    )


def _cut(text: str, fraction: float) -> str:
    return text[: int(len(text) * fraction)]


def hazard_transforms(provider: str) -> list[str]:
    return list(RESPONSE_TRANSFORMS) if provider == "openai" else []


def assert_storable(message: Message) -> None:
    again = Message.model_validate_json(message_json(message))
    assert again.role == "assistant"
    for call in again.tool_calls:
        assert call.name


@pytest.mark.parametrize("provider", PROVIDERS)
@fuzz(600)
@given(data=st.data())
def test_adapter_parses_or_raises_a_format_error(provider: str, data: st.DataObject) -> None:
    hit(f"providers: {provider} parse")
    raw = data.draw(response_text(provider))
    adapter = ADAPTERS[provider]
    try:
        body = loads_lenient(raw)
        parsed = adapter.parse_response(body, raw)
    except ProviderFormatError as err:
        assert err.reason
        assert len(err.snippet) <= 500
        return
    except ProviderErrorReply as err:
        assert err.code in KNOWN_CODES
        return
    assert_storable(parsed.message)
    assert parsed.usage.input_tokens >= 0 and parsed.usage.output_tokens >= 0


@pytest.mark.parametrize("provider", PROVIDERS)
@fuzz(300)
@given(data=st.data(), transforms=st.lists(st.sampled_from(RESPONSE_TRANSFORMS), max_size=5))
def test_read_reply_is_a_reply_or_a_coded_application_error(
    provider: str, data: st.DataObject, transforms: list[str]
) -> None:
    """The activity's view: response transforms, then the adapter; only coded errors."""
    hit(f"providers: {provider} read_reply + transforms")
    raw = data.draw(response_text(provider))
    endpoint = LlmEndpoint(provider=provider, model="m", base_url="http://x")
    try:
        parsed = read_reply(
            ADAPTERS[provider],
            endpoint,
            raw,
            "sk-secret-key",
            Inbound(CONTEXT, TransformSet(response_transforms=list(dict.fromkeys(transforms)))),
        )
    except ApplicationError as err:
        assert err.type in KNOWN_CODES
        assert "sk-secret-key" not in err.message
        # The catch-all branch quotes an exception class: the adapters never need it.
        assert "Error: " not in err.message.split("; response began")[0], err.message
        return
    assert_storable(parsed.message)


@pytest.mark.parametrize("provider", PROVIDERS)
@fuzz(200)
@given(status=st.integers(100, 599), raw=st.one_of(TEXT, st.builds(body_text, JSON_VALUES)))
def test_classify_status_never_raises(provider: str, status: int, raw: str) -> None:
    hit(f"providers: {provider} classify_status")
    verdict = ADAPTERS[provider].classify_status(status, raw)
    assert verdict.code
    if verdict.retry_after_s is not None:
        assert verdict.retry_after_s >= 0


@st.composite
def transcripts(draw: st.DrawFn) -> list[Message]:
    """Stored transcripts as the loop writes them, with hostile content and arguments."""
    messages: list[Message] = [Message.user(draw(NASTY_TEXT) or "hi")]
    for turn in range(draw(st.integers(0, 2))):
        names = draw(st.lists(st.sampled_from(["add", "search", "nope"]), max_size=2))
        calls = [
            ToolCall(id=f"c{turn}_{i}", name=name, arguments=draw(RAW_ARGUMENTS))
            for i, name in enumerate(names)
        ]
        messages.append(
            Message(role="assistant", content=draw(st.none() | NASTY_TEXT), tool_calls=calls)
        )
        for call in calls:
            messages.append(Message.tool_result(call.id, call.name, _envelope(draw)))
    return [Message.model_validate_json(m.model_dump_json()) for m in _storable(messages)]


def _envelope(draw: st.DrawFn):
    from durable_loop.core.envelope import Envelope

    if draw(st.booleans()):
        return Envelope.failure(ErrorCode.TOOL_ERROR, draw(NASTY_TEXT))
    return Envelope.success(json.loads(json.dumps(draw(ENVELOPE_DATA), allow_nan=True)))


def _storable(messages: list[Message]) -> list[Message]:
    from durable_loop.core.canonical_json import scrub_surrogates

    return [Message.model_validate(scrub_surrogates(m.model_dump())) for m in messages]


@pytest.mark.parametrize("provider", PROVIDERS)
@fuzz(150)
@given(messages=transcripts())
def test_any_stored_transcript_builds_a_strict_json_request(
    provider: str, messages: list[Message]
) -> None:
    hit(f"providers: {provider} build_request")
    tools = [ToolSpec(name="add", parameters={"type": "object"})]
    plan = PromptPlan(model="m", provider=provider, session_id="s", upto_seq=9, tools=tools)
    request = ADAPTERS[provider].build_request(plan, messages)
    # What httpx sends must be strict JSON: no NaN / Infinity, encodable as UTF-8.
    json.dumps(request.body, allow_nan=False).encode("utf-8")


PROVIDER_HAZARDS = {
    "openai": [
        '{"choices":[{"message":{"content":"\\ud800","tool_calls":[{"id":"\\udfff",'
        '"type":"function","function":{"name":"add\\ud83d","arguments":"{}"}}]},'
        '"finish_reason":"\\ud800"}]}',
        '{"choices":[{"message":{"content":"<tool_call>' + "[" * 5000 + '</tool_call>"}}]}',
        '{"choices":[{"message":{"content":"' + "[" * 5000 + '"}}]}',
    ],
    "anthropic": [
        '{"type":"message","content":[{"type":"tool_use","id":"t","name":"add",'
        '"input":{"a":NaN,"b":"\\ud800"}}],"stop_reason":"tool_use"}',
        '{"type":"message","content":[{"type":"tool_use","id":"t","name":"add","input":'
        + '{"a":' * 400
        + "1"
        + "}" * 400
        + '}],"stop_reason":"tool_use"}',
    ],
    "gemini": [
        '{"candidates":[{"content":{"parts":[{"functionCall":{"name":"add","args":'
        '{"x":Infinity}}},{"text":"\\udc80"}]},"finishReason":"\\ud800"}]}',
        "[" * 100_000,
    ],
}


@pytest.mark.parametrize(
    ("provider", "raw"), [(p, raw) for p, raws in PROVIDER_HAZARDS.items() for raw in raws]
)
def test_known_provider_hazards(provider: str, raw: str) -> None:
    """Regression cases found by the fuzzer: lone surrogates, NaN, deep nesting."""
    hit(f"providers: {provider} parse")
    endpoint = LlmEndpoint(provider=provider, model="m", base_url="http://x")
    try:
        parsed = read_reply(
            ADAPTERS[provider],
            endpoint,
            raw,
            None,
            Inbound(CONTEXT, TransformSet(response_transforms=hazard_transforms(provider))),
        )
    except ApplicationError as err:
        assert err.type == ErrorCode.PROVIDER_BAD_RESPONSE
        assert "Error: " not in err.message.split("; response began")[0], err.message
        return
    assert_storable(parsed.message)
    plan = PromptPlan(model="m", provider=provider, session_id="s", upto_seq=2)
    stored = Message.model_validate_json(message_json(parsed.message))
    request = ADAPTERS[provider].build_request(plan, [Message.user("hi"), stored])
    json.dumps(request.body, allow_nan=False).encode("utf-8")
