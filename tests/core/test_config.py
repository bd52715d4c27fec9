"""RuntimeConfig and LlmEndpoint validation: bad input is refused with a clear message."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from durable_loop.core.config import RuntimeConfig
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.retry import RetrySettings


def test_tool_lists_accept_comma_separated_strings():
    config = RuntimeConfig(tool_allowlist=" add, read_file ,,", tool_denylist="secret")
    assert config.tool_allowlist == ["add", "read_file"]
    assert config.tool_denylist == ["secret"]
    assert RuntimeConfig(tool_allowlist=["a", "b"]).tool_allowlist == ["a", "b"]
    assert RuntimeConfig().tool_allowlist is None


def test_reserved_request_override_keys_are_dropped():
    config = RuntimeConfig(
        request_overrides={
            "temperature": 0,
            "model": "x",
            "messages": [],
            "tools": [],
            "tool_choice": "none",
            "response_format": {},
            "seed": 7,
        }
    )
    assert config.request_overrides == {"temperature": 0, "seed": 7}


@pytest.mark.parametrize(
    ("max_calls", "parallel", "expected"),
    [(None, None, None), (None, True, None), (None, False, 1), (3, None, 3), (3, False, 3)],
)
def test_effective_max_tool_calls_per_turn(max_calls, parallel, expected):
    config = RuntimeConfig(max_tool_calls_per_turn=max_calls, parallel_tool_calls=parallel)
    assert config.effective_max_tool_calls_per_turn() == expected
    assert config.runs_tools_concurrently() is (parallel is not False)


@pytest.mark.parametrize("choice", ["auto", "none", "required", {"type": "function"}])
def test_tool_choice_accepts_known_values(choice):
    assert RuntimeConfig(tool_choice=choice).tool_choice == choice


def test_bad_tool_choice_is_refused_with_a_message():
    with pytest.raises(ValidationError, match="tool_choice must be 'auto', 'none', 'required'"):
        RuntimeConfig(tool_choice="always")


@pytest.mark.parametrize(
    "bad",
    [
        {"tool_use_mode": "sometimes"},
        {"tool_failure_policy": "ignore"},
        {"max_turns": 0},
        {"max_tool_calls_per_turn": 0},
        {"continue_as_new_after_events": 10},
        {"unknown_knob": True},
    ],
)
def test_invalid_runtime_values_are_refused(bad):
    with pytest.raises(ValidationError):
        RuntimeConfig(**bad)


def test_config_is_frozen():
    with pytest.raises(ValidationError):
        RuntimeConfig().max_turns = 3  # type: ignore[misc]


def test_endpoint_normalises_urls_and_refuses_bad_ones():
    endpoint = LlmEndpoint(model="m", base_url="http://host:1/", api_prefix="v1/")
    assert endpoint.base_url == "http://host:1" and endpoint.api_prefix == "/v1"
    with pytest.raises(ValidationError, match="must start with http"):
        LlmEndpoint(model="m", base_url="ftp://host")
    with pytest.raises(ValidationError):
        LlmEndpoint(model="m", timeout_s=0)


def test_retry_settings_convert_to_timedeltas():
    retry = RetrySettings(initial_interval_s=0.5, maximum_interval_s=4)
    assert retry.initial_interval().total_seconds() == 0.5
    assert retry.maximum_interval().total_seconds() == 4
    with pytest.raises(ValidationError):
        RetrySettings(backoff_coefficient=0.5)
