"""Presets compose RuntimeConfig values explicitly; the config stays the source of truth."""

from __future__ import annotations

import pytest

from durable_loop.core import presets
from durable_loop.core.catalog import CATALOG
from durable_loop.core.config import RuntimeConfig, ToolUseMode
from durable_loop.core.errors import ConfigError


def test_compose_unions_lists_merges_overrides_and_lets_the_last_scalar_win():
    merged = presets.compose(
        {"response_transforms": ["assistant_function_call_to_tool_calls"], "max_turns": 4},
        {"request_overrides": {"temperature": 0.1}},
        presets.content_tag_tool_call_fallback(),
        {
            "transforms": {"response_transforms": ["assistant_function_call_to_tool_calls"]},
            "max_turns": 6,
        },
        {"request_overrides": {"top_p": 0.9}},
    )
    assert merged == {
        "transforms": {
            "response_transforms": [
                "assistant_function_call_to_tool_calls",
                "assistant_content_tool_call_tags_to_tool_calls",
            ]
        },
        "max_turns": 6,
        "request_overrides": {"temperature": 0.1, "top_p": 0.9},
    }


def test_compose_merges_router_settings_instead_of_replacing_them():
    base = RuntimeConfig(router={"repair_attempts": 2, "summarize": False})
    config = presets.apply(presets.router_json_mode(), base=base)
    assert config.router.json_mode is True
    assert (config.router.repair_attempts, config.router.summarize) == (2, False)


def test_apply_builds_a_validated_config_on_top_of_a_base():
    base = RuntimeConfig(
        max_turns=3, transforms={"response_transforms": ["assistant_tool_calls_object_to_array"]}
    )
    config = presets.apply(presets.openai_compatible_reliability(), base=base)
    assert config.max_turns == 3
    assert config.parallel_tool_calls is False and config.max_tool_calls_per_turn == 1
    assert config.transforms.response_transforms[0] == "assistant_tool_calls_object_to_array"
    assert "assistant_function_call_to_tool_calls" in config.transforms.response_transforms
    assert config.transforms.tool_call_transforms == [
        "assistant_tool_calls_arguments_blank_to_empty_object"
    ]


def test_every_preset_yields_a_valid_config():
    for name, preset in presets.WORKAROUNDS.items():
        assert isinstance(presets.apply(preset()), RuntimeConfig), name
    assert presets.apply(presets.default_tool_calling()) == RuntimeConfig()
    assert presets.apply(presets.tool_use_disabled()).tool_use_mode is ToolUseMode.DISABLED


@pytest.mark.parametrize("provider", ["openai", "openrouter", "anthropic", "gemini"])
def test_provider_defaults(provider):
    config = presets.apply(presets.provider_defaults(provider))
    openai_like = provider in ("openai", "openrouter")
    assert (
        "assistant_tool_calls_object_to_array" in config.transforms.response_transforms
    ) is openai_like
    gemini = (
        "assistant_tool_calls_signature_skip_validator_if_missing"
        in config.transforms.message_transforms
    )
    assert gemini is (provider == "gemini")


def test_provider_defaults_refuses_an_unknown_provider():
    with pytest.raises(ConfigError, match="known: anthropic, gemini"):
        presets.provider_defaults("cohere")


def test_compat_presets_are_message_shims():
    deepseek = presets.apply(presets.deepseek_openrouter_compat())
    assert (
        "assistant_tool_calls_reasoning_content_empty_if_missing"
        in deepseek.transforms.message_transforms
    )
    gemini = presets.apply(presets.gemini_openrouter_compat())
    assert (
        "assistant_tool_calls_signature_skip_validator_if_missing"
        in gemini.transforms.message_transforms
    )


def test_for_model_uses_the_catalog_workarounds_and_sampling():
    glm = presets.apply(presets.for_model("openrouter", "z-ai/glm-4.7-flash:nitro"))
    assert "assistant_content_tool_call_tags_to_tool_calls" in glm.transforms.response_transforms
    assert glm.request_overrides == {"temperature": 0.7, "top_p": 1.0}
    baseline = presets.apply(
        presets.for_model("openrouter", "z-ai/glm-4.7-flash", workarounds=False)
    )
    assert (
        "assistant_content_tool_call_tags_to_tool_calls"
        not in baseline.transforms.response_transforms
    )
    assert "assistant_tool_calls_object_to_array" in baseline.transforms.response_transforms
    her = presets.apply(presets.for_model("openrouter", "minimax/minimax-m2-her"))
    assert her.tool_use_mode is ToolUseMode.DISABLED


def test_for_model_on_the_local_qwen_coder():
    local = presets.apply(presets.for_model("openai", "qwen2.5-coder-local"))
    assert local.request_overrides == {"temperature": 0, "max_tokens": 768}
    assert local.max_tool_calls_per_turn == 1
    assert local.router.json_mode is True and local.uses("call_requested_tool")
    assert {
        "assistant_content_tool_call_tags_to_tool_calls",
        "assistant_content_json_tool_calls_to_tool_calls",
    } <= set(local.transforms.response_transforms)


def test_for_an_unknown_model_is_the_provider_baseline():
    assert presets.for_model("anthropic", "claude-unknown") == presets.compose(
        presets.default_tool_calling(), presets.provider_defaults("anthropic")
    )


def test_every_catalog_workaround_is_a_preset():
    for entry in CATALOG:
        assert set(entry.workarounds) <= set(presets.WORKAROUNDS), entry.model


def test_recoveries_compose_by_name_and_can_be_turned_off():
    on = presets.compose(
        presets.recoveries("call_requested_tool"),
        {"recoveries": {"call_requested_tool": {"text": "Call {name}."}}},
        presets.without_recoveries("fix_empty_final"),
    )
    config = presets.apply(on)
    assert list(config.recoveries) == [
        "correct_typed_answer",
        "repeated_call_guard",
        "call_requested_tool",
    ]
    assert config.recoveries["call_requested_tool"].model_dump() == {"text": "Call {name}."}
