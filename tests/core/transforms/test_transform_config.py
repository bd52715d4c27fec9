"""Transforms are configured by name, as a list or a comma-separated string."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from durable_loop.core.config import RuntimeConfig
from durable_loop.core.transforms import inbound, outbound
from durable_loop.core.transforms.names import VALID_NAMES
from durable_loop.core.transforms.registry import (
    MESSAGE,
    RESPONSE,
    TOOL_CALLS,
    TOOL_RESULTS,
    TOOLS,
)


def test_comma_separated_string_and_list_are_equal():
    text = RuntimeConfig(
        transforms={
            "response_transforms": " assistant_function_call_to_tool_calls, "
            "assistant_tool_calls_object_to_array,assistant_function_call_to_tool_calls"
        }
    )
    listed = RuntimeConfig(
        transforms={
            "response_transforms": [
                "assistant_function_call_to_tool_calls",
                "assistant_tool_calls_object_to_array",
            ]
        }
    )
    assert text.transforms.response_transforms == listed.transforms.response_transforms
    assert listed.transform_set().all_names() == listed.transforms.response_transforms


@pytest.mark.parametrize("setting", sorted(VALID_NAMES))
def test_an_unknown_name_is_a_config_error_naming_the_valid_ones(setting):
    with pytest.raises(ValidationError) as caught:
        RuntimeConfig(transforms={setting: ["assistant_tool_calls_oops"]})
    message = str(caught.value)
    assert "CONFIG_ERROR" in message and "assistant_tool_calls_oops" in message
    assert all(name in message for name in VALID_NAMES[setting])


def test_a_name_valid_at_another_point_is_refused_here():
    with pytest.raises(ValidationError):
        RuntimeConfig(transforms={"message_transforms": ["tool_result_compact_envelope"]})


def test_the_old_flat_keys_are_still_checked():
    with pytest.raises(ValidationError):
        RuntimeConfig.model_validate({"tool_transforms": "tool_result_compact_envelope"})


def test_every_valid_name_has_a_pure_function_with_a_docstring():
    tables = {
        "message_transforms": MESSAGE,
        "tool_transforms": TOOLS,
        "response_transforms": RESPONSE,
        "tool_call_transforms": TOOL_CALLS,
        "tool_result_transforms": TOOL_RESULTS,
    }
    for setting, names in VALID_NAMES.items():
        assert sorted(tables[setting]) == sorted(names)
        for name in names:
            fn = getattr(inbound, name, None) or getattr(outbound, name)
            assert fn.__doc__, name
