"""The model catalog and the enforced-mode reliability gate."""

from __future__ import annotations

import pytest

from durable_loop.core import catalog
from durable_loop.core.config import RuntimeConfig, SessionSettings
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.errors import ConfigError


def test_lookup_by_provider_model_alias_and_route_variant():
    assert catalog.lookup("openrouter", "google/gemini-2.5-flash:nitro").tool_calling_reliable
    local = catalog.lookup("openai", "qwen2.5-coder-local")
    assert local is not None and local.model == "qwen2.5-coder-1.5b-instruct"
    assert "local" in local.tags
    assert catalog.lookup("openai", "Qwen2.5-Coder-0.5B-Instruct").model.endswith("0.5b-instruct")
    # an OpenAI-compatible endpoint may front OpenRouter models
    assert catalog.lookup("openai", "z-ai/glm-4.7").provider == "openrouter"
    assert catalog.lookup("anthropic", "z-ai/glm-4.7") is None
    assert catalog.lookup("gemini", "gemini-2.5-flash").provider == "gemini"


def test_every_entry_is_unique_and_tagged():
    keys = [(e.provider, name) for e in catalog.CATALOG for name in e.names()]
    assert len(keys) == len(set(keys))
    assert all(e.tags for e in catalog.CATALOG)
    assert {e.model for e in catalog.with_tag("local")} == {
        "qwen2.5-coder-1.5b-instruct",
        "qwen2.5-coder-0.5b-instruct",
    }


def settings(model: str, provider: str = "openai", **runtime) -> SessionSettings:
    return SessionSettings(
        llm=LlmEndpoint(provider=provider, model=model), runtime=RuntimeConfig(**runtime)
    )


def test_enforced_on_an_unreliable_model_is_refused_unless_overridden():
    with pytest.raises(ConfigError, match="CONFIG_ERROR: tool_use_mode=enforced") as caught:
        catalog.refuse_unreliable_enforced(
            settings("qwen2.5-coder-local", tool_use_mode="enforced")
        )
    assert "allow_enforced_on_unreliable_model" in str(caught.value)
    catalog.refuse_unreliable_enforced(
        settings(
            "qwen2.5-coder-local",
            tool_use_mode="enforced",
            allow_enforced_on_unreliable_model=True,
        )
    )
    catalog.refuse_unreliable_enforced(settings("qwen2.5-coder-local"))  # relaxed is fine


def test_enforced_on_a_reliable_or_unknown_model_passes_and_endpoints_can_mark_themselves():
    catalog.refuse_unreliable_enforced(
        settings("openai/gpt-5.2", provider="openrouter", tool_use_mode="enforced")
    )
    catalog.refuse_unreliable_enforced(settings("my-finetune", tool_use_mode="enforced"))
    marked = SessionSettings(
        llm=LlmEndpoint(model="my-finetune", tool_calling_reliable=False),
        runtime=RuntimeConfig(tool_use_mode="enforced"),
    )
    with pytest.raises(ConfigError):
        catalog.refuse_unreliable_enforced(marked)
    vouched = LlmEndpoint(model="qwen2.5-coder-local", tool_calling_reliable=True)
    assert catalog.is_reliable(vouched) is True


def test_a_fallback_model_is_checked_too():
    chained = SessionSettings(
        llm=LlmEndpoint(provider="openrouter", model="openai/gpt-5.2"),
        fallback_llms=[LlmEndpoint(provider="openrouter", model="z-ai/glm-4.7-flash")],
        runtime=RuntimeConfig(tool_use_mode="enforced"),
    )
    with pytest.raises(ConfigError, match=r"glm-4\.7-flash"):
        catalog.refuse_unreliable_enforced(chained)
