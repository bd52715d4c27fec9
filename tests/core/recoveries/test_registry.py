"""runtime.recoveries: the forms it takes, what it refuses, the order it keeps."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from durable_loop.core.config import RuntimeConfig
from durable_loop.core.recoveries import REGISTRY, default_names, judges


def test_the_default_is_the_recoveries_marked_on_by_default():
    assert list(RuntimeConfig().recoveries) == default_names()
    assert default_names() == ["fix_empty_final", "correct_typed_answer", "repeated_call_guard"]


def test_a_list_of_names_turns_exactly_those_on_in_registry_order():
    config = RuntimeConfig(recoveries=["call_requested_tool", "fix_empty_final"])
    assert list(config.recoveries) == ["fix_empty_final", "call_requested_tool"]
    assert config.uses("call_requested_tool") and not config.uses("repeated_call_guard")


def test_a_mapping_gives_settings_and_false_turns_one_off():
    config = RuntimeConfig(
        recoveries={"retry_after_tool_error": {"attempts": 3}, "fix_empty_final": False}
    )
    assert list(config.recoveries) == ["retry_after_tool_error"]
    assert config.recoveries["retry_after_tool_error"].model_dump()["attempts"] == 3


def test_a_comma_separated_string_is_a_list():
    assert list(RuntimeConfig(recoveries="call_referred_tool, fix_empty_final").recoveries) == [
        "fix_empty_final",
        "call_referred_tool",
    ]


def test_unknown_names_and_settings_are_refused():
    with pytest.raises(ValidationError, match="unknown recoveries nope"):
        RuntimeConfig(recoveries=["nope"])
    with pytest.raises(ValidationError, match="extra"):
        RuntimeConfig(recoveries={"call_requested_tool": {"txt": "x"}})
    with pytest.raises(ValidationError):
        RuntimeConfig(recoveries={"retry_after_tool_error": {"attempts": 0}})


def test_a_config_round_trips_through_json():
    config = RuntimeConfig(recoveries={"call_requested_tool": {"text": "Call {name}."}})
    assert RuntimeConfig.model_validate_json(config.model_dump_json()) == config


def test_judges_are_grouped_by_stage_in_order():
    config = RuntimeConfig(recoveries=list(REGISTRY))
    assert [r.name for r, _ in judges(config.recoveries, "reply")] == [
        "fix_empty_final",
        "retry_after_tool_error",
    ]
    assert [r.name for r, _ in judges(config.recoveries, "answer")] == [
        "call_referred_tool",
        "call_requested_tool",
    ]
    assert judges(config.recoveries, "refused_call") == []  # carried out by their own code


def test_every_recovery_names_what_it_fixes_and_its_measured_effect():
    for name, recovery in REGISTRY.items():
        assert recovery.name == name and recovery.fixes and recovery.effect
        own_code = ("typed", "refused_call", "call", "message")
        assert (recovery.judge is None) == (recovery.stage in own_code)
