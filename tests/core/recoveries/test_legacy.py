"""The flat recovery keys of stored histories and old settings files are still read, named,
and digested as before."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from durable_loop.core.canonical_json import canonical_dumps
from durable_loop.core.config import RuntimeConfig
from durable_loop.core.recoveries import finalize_after_repeat
from durable_loop.core.recoveries.legacy import notes, old_keys
from durable_loop.core.settings_digest import runtime_digest_form

HISTORIES = Path(__file__).resolve().parents[2] / "histories"


def stored_runtime(history: str) -> dict[str, object]:
    """The runtime config a recorded session was started with, as stored."""
    events = json.loads((HISTORIES / history).read_text())["events"]
    started = events[0]["workflowExecutionStartedEventAttributes"]["input"]["payloads"][0]
    return json.loads(base64.b64decode(started["data"]))["settings"]["runtime"]


def test_old_flat_keys_become_recoveries():
    old = RuntimeConfig(
        fix_empty_final=False,
        retry_after_tool_error=2,
        retry_after_tool_error_text="{name}: {error}",
        call_requested_tool=True,
        output_retries=0,
    )
    assert list(old.recoveries) == [
        "retry_after_tool_error",
        "repeated_call_guard",
        "call_requested_tool",
    ]
    assert old.recoveries["retry_after_tool_error"].model_dump() == {
        "attempts": 2,
        "text": "{name}: {error}",
    }


def test_the_text_of_a_recovery_left_off_is_dropped():
    assert not RuntimeConfig(call_referred_tool_text="x {name}").uses("call_referred_tool")


def test_old_keys_apply_over_a_recoveries_given_beside_them():
    config = RuntimeConfig(recoveries=["call_referred_tool"], repeated_call_guard=True)
    assert list(config.recoveries) == ["repeated_call_guard", "call_referred_tool"]


def test_stored_history_configs_read_and_digest_as_they_were_stored():
    """The newest recording is digested byte for byte as stored; older ones lack only the
    fields added since (they take their defaults), every stored value is kept."""
    newest = stored_runtime("requested_tool.run0.json")
    config = RuntimeConfig.model_validate(newest)
    assert canonical_dumps(runtime_digest_form(config)) == canonical_dumps(newest)
    for history in ("recoveries.run0.json", "happy_path.run0.json"):
        stored = stored_runtime(history)
        assert set(old_keys()) & set(stored), history
        form = runtime_digest_form(RuntimeConfig.model_validate(stored))
        assert {key: form[key] for key in stored} == stored, history


def test_the_recorded_recoveries_history_turns_on_what_it_used():
    config = RuntimeConfig.model_validate(stored_runtime("recoveries.run0.json"))
    used = {
        "finalize_text_call_reply",
        "call_referred_tool",
        "repair_invalid_arguments",
        "shorten_oversized_arguments",
    }
    assert used <= set(config.recoveries)


def test_a_recovery_no_old_key_can_say_is_digested_under_recoveries(custom_recovery):
    config = RuntimeConfig(recoveries=["fix_empty_final", custom_recovery.name])
    form = runtime_digest_form(config)
    assert form["recoveries"] == {custom_recovery.name: {"text": "End with a full stop."}}
    assert form["fix_empty_final"] is True


def test_notes_name_the_new_key_of_each_old_one():
    assert notes({"fix_empty_final": False, "max_turns": 3, "output_retries": 1}) == [
        "settings: runtime.fix_empty_final is read as runtime.recoveries.fix_empty_final "
        "(the old key still works)",
        "settings: runtime.output_retries is read as "
        "runtime.recoveries.correct_typed_answer.attempts (the old key still works)",
    ]
    assert notes({"recoveries": ["fix_empty_final"]}) == []


def test_a_reworded_default_digests_as_stored_while_off_and_as_sent_while_on():
    off = runtime_digest_form(RuntimeConfig())
    on = runtime_digest_form(RuntimeConfig(recoveries=["finalize_after_repeat"]))
    assert off["finalize_after_repeat_text"] == finalize_after_repeat.TEXT_UNTIL_2026_11_27
    assert on["finalize_after_repeat_text"] == finalize_after_repeat.DEFAULT_TEXT
