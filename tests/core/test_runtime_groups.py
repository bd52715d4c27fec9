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
