"""The adapter registry and the per-provider default API prefix."""

from __future__ import annotations

import pytest

from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.errors import ConfigError
from durable_loop.core.providers import ADAPTERS, get_adapter


@pytest.mark.parametrize(
    ("provider", "prefix"),
    [("openai", "/v1"), ("openrouter", "/v1"), ("anthropic", "/v1"), ("gemini", "/v1beta")],
)
def test_default_api_prefix_comes_from_the_adapter(provider, prefix):
    assert ADAPTERS[provider].default_api_prefix == prefix
    assert LlmEndpoint(provider=provider, model="m").api_prefix == prefix
    assert LlmEndpoint(provider=provider, model="m", api_prefix=None).api_prefix == prefix


def test_an_explicit_prefix_wins_and_survives_a_round_trip():
    endpoint = LlmEndpoint(provider="gemini", model="m", api_prefix="")
    assert endpoint.api_prefix == ""
    assert LlmEndpoint.model_validate_json(endpoint.model_dump_json()).api_prefix == ""


def test_unknown_provider_names_the_known_ones():
    with pytest.raises(ConfigError) as caught:
        get_adapter("cohere")
    assert "anthropic" in str(caught.value) and "gemini" in str(caught.value)
