"""The grouped RuntimeConfig fields: read from their old flat keys, digested in the old
flat shape, merged by presets, named by the CLI."""

from __future__ import annotations

from durable_loop.core import presets
from durable_loop.core.config import RuntimeConfig
from durable_loop.core.recoveries.legacy import notes
from durable_loop.core.runtime_groups import MOVED, flatten
from durable_loop.core.settings_digest import runtime_digest_form


def test_flat_keys_are_read_into_their_groups():
    config = RuntimeConfig(tool_timeout_s=5.0, transcript_tail=7, fallback_retry_count=1)
    assert config.retries.tool_timeout_s == 5.0 and config.retries.fallback_retry_count == 1
    assert config.history.transcript_tail == 7


def test_a_flat_key_beside_its_group_wins_like_a_later_update():
    config = RuntimeConfig.model_validate(
        {"retries": {"tool_timeout_s": 5.0, "fallback_retry_count": 2}, "tool_timeout_s": 9.0}
    )
    assert config.retries.tool_timeout_s == 9.0 and config.retries.fallback_retry_count == 2


def test_the_digest_form_is_the_old_flat_shape():
    config = RuntimeConfig(heartbeat_timeout_s=None, inline_bytes=100)
    form = runtime_digest_form(config)
    assert "retries" not in form and "history" not in form
    assert form["heartbeat_timeout_s"] is None and form["inline_bytes"] == 100
    assert set(MOVED) <= set(form)


def test_presets_merge_a_group_field_by_field():
    config = presets.apply(
        {"retries": {"tool_timeout_s": 5.0}}, {"retries": {"fallback_retry_count": 1}}
    )
    assert config.retries.tool_timeout_s == 5.0 and config.retries.fallback_retry_count == 1


def test_flatten_and_notes():
    assert flatten({"history": {"transcript_tail": 3}, "max_turns": 2}) == {
        "transcript_tail": 3,
        "max_turns": 2,
    }
    assert notes({"transcript_tail": 3}, MOVED) == [
        "settings: runtime.transcript_tail is read as runtime.history.transcript_tail "
        "(the old key still works)"
    ]


def test_the_old_flat_transform_keys_are_read_into_the_transforms_group():
    config = RuntimeConfig.model_validate(
        {
            "provider_normalization": False,
            "response_transforms": "assistant_tool_calls_object_to_array",
            "tool_result_transforms": ["tool_result_compact_envelope"],
        }
    )
    assert config.transforms.provider_normalization is False
    assert config.transforms.response_transforms == ["assistant_tool_calls_object_to_array"]
    assert config.transform_set().all_names() == [
        "assistant_tool_calls_object_to_array",
        "tool_result_compact_envelope",
    ]
    assert MOVED["provider_normalization"] == "transforms.provider_normalization"
    assert MOVED["tool_call_transforms"] == "transforms.tool_call_transforms"
    assert notes({"provider_normalization": False}, MOVED) == [
        "settings: runtime.provider_normalization is read as "
        "runtime.transforms.provider_normalization (the old key still works)"
    ]


def test_a_transforms_config_digests_as_its_old_flat_keys():
    form = runtime_digest_form(RuntimeConfig(transforms={"provider_normalization": False}))
    assert "transforms" not in form and form["provider_normalization"] is False
    assert form["message_transforms"] == [] and form["tool_result_transforms"] == []


def test_presets_union_the_transform_lists_of_flat_and_grouped_updates():
    config = presets.apply(
        {"response_transforms": ["assistant_tool_calls_object_to_array"]},
        presets.content_tag_tool_call_fallback(),
        {"transforms": {"provider_normalization": False}},
    )
    assert config.transforms.response_transforms == [
        "assistant_tool_calls_object_to_array",
        "assistant_content_tool_call_tags_to_tool_calls",
    ]
    assert config.transforms.provider_normalization is False
