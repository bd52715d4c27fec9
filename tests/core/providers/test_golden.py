"""Every adapter against golden request/response/error fixtures written from the providers'
public API references (tests/fixtures/providers/<provider>/)."""

from __future__ import annotations

import json

import pytest
from temporalio.exceptions import ApplicationError

from durable_loop.activities.provider_http import read_reply
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.messages import ToolCall
from durable_loop.core.providers import ADAPTERS
from durable_loop.core.providers.base import SNIPPET_LIMIT
from durable_loop.core.transforms.inbound import InboundContext
from durable_loop.core.transforms.pipeline import Inbound
from tests.core.providers.golden import PROVIDERS, conversation, load, request_fixtures

REQUESTS = [(p, name) for p in PROVIDERS for name in request_fixtures(p)]


def cases(file: str) -> list[tuple[str, dict]]:
    return [(p, case) for p in PROVIDERS for case in load(p, file)["cases"]]


@pytest.mark.parametrize(("provider", "name"), REQUESTS)
def test_request_matches_fixture(provider, name):
    fixture = load(provider, name)
    plan, messages = conversation(fixture["model"], fixture["ids"])
    adapter = ADAPTERS[provider]
    request = adapter.build_request(plan, messages)
    assert request.endpoint == fixture["request"]["endpoint"]
    assert request.body == fixture["request"]["body"]
    assert adapter.request_headers("KEY") == fixture["headers"]


@pytest.mark.parametrize(("provider", "case"), cases("responses.json"))
def test_response_parses_to_fixture(provider, case):
    raw = json.dumps(case["response"])
    reply = ADAPTERS[provider].parse_response(case["response"], raw)
    expected = case["reply"]["message"]
    assert reply.message.role == expected["role"]
    assert reply.message.content == expected.get("content")
    assert reply.message.tool_calls == [
        ToolCall.model_validate(call) for call in expected.get("tool_calls", [])
    ]
    assert reply.finish_reason == case["reply"]["finish_reason"]
    assert reply.usage.model_dump() == case["reply"]["usage"]


@pytest.mark.parametrize(("provider", "case"), cases("errors.json"))
def test_error_status_is_classified(provider, case):
    verdict = ADAPTERS[provider].classify_status(case["status"], json.dumps(case["body"]))
    assert verdict.model_dump(exclude_none=True) == case["verdict"]


@pytest.mark.parametrize(("provider", "case"), cases("bad_responses.json"))
def test_bad_response_is_a_coded_error_with_a_bounded_snippet(provider, case):
    err = refusal(provider, case["raw"])
    assert err.type == case["code"]
    assert err.non_retryable is not case.get("retryable", False)
    if "mentions" in case:
        assert case["mentions"] in err.message


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_raw_snippet_in_the_error_is_bounded(provider):
    page = "<html><body>" + "x" * 5000 + "TAIL-NOT-QUOTED</body></html>"
    err = refusal(provider, page)
    assert err.type == "PROVIDER_BAD_RESPONSE" and err.non_retryable
    assert "<html><body>xxx" in err.message
    assert "TAIL-NOT-QUOTED" not in err.message
    assert len(err.message) < SNIPPET_LIMIT + 200


def refusal(provider: str, raw: str) -> ApplicationError:
    with pytest.raises(ApplicationError) as caught:
        read_reply(
            ADAPTERS[provider],
            LlmEndpoint(provider=provider, model="m"),
            raw,
            None,
            Inbound(InboundContext(call_id_prefix="1")),
        )
    return caught.value
