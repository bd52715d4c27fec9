"""judge_final: tool_use_mode and tool_failure_policy applied to a finished loop."""

from __future__ import annotations

import pytest

from durable_loop.core.config import RuntimeConfig
from durable_loop.core.outcome import judge_final, preview

ENFORCED = RuntimeConfig(tool_use_mode="enforced")
TOLERATED = RuntimeConfig(tool_use_mode="enforced", tool_failure_policy="tolerated")


def code(config, calls, last_ok):
    verdict = judge_final(config, tool_calls_made=calls, last_ok_by_tool=last_ok)
    return verdict.code if verdict else None


@pytest.mark.parametrize("mode", ["relaxed", "disabled"])
def test_non_enforced_modes_accept_anything(mode):
    config = RuntimeConfig(tool_use_mode=mode)
    assert code(config, 0, {}) is None
    assert code(config, 2, {"add": False}) is None


def test_enforced_needs_a_tool_call():
    assert code(ENFORCED, 0, {}) == "NO_TOOL_CALLS"


def test_fatal_fails_when_any_tool_ended_in_error():
    assert code(ENFORCED, 2, {"add": True, "read": False}) == "TOOL_ERROR"
    assert code(ENFORCED, 2, {"add": True, "read": True}) is None


def test_tolerated_needs_one_success():
    assert code(TOLERATED, 2, {"add": False, "read": True}) is None
    assert code(TOLERATED, 1, {"add": False}) == "TOOL_ERROR"


def test_fatal_message_names_the_failed_tools():
    verdict = judge_final(ENFORCED, tool_calls_made=3, last_ok_by_tool={"b": False, "a": False})
    assert verdict is not None and "['a', 'b']" in verdict.message


def test_preview_flattens_and_bounds_text():
    assert preview(None) == "" and preview("a\n  b") == "a b"
    long = preview("x" * 500, limit=10)
    assert len(long) == 10 and long.endswith("…")


def test_failure_text_reads_the_first_error_of_an_envelope():
    from durable_loop.core.outcome import failure_text

    envelope = '{"ok": false, "errors": [{"code": "INVALID_ARGS", "message": "a must be int"}]}'
    assert failure_text(["INVALID_ARGS"], envelope) == "INVALID_ARGS: a must be int"
    assert failure_text(["TOOL_NOT_FOUND"], "no tool named 'x'") == (
        "TOOL_NOT_FOUND: no tool named 'x'"
    )
    assert failure_text(["TOOL_ERROR"], '{"ok": false, "errors": [{"code": "TOOL_ERR…') == (
        'TOOL_ERROR: {"ok": false, "errors": [{"code": "TOOL_ERR…'
    )
    assert len(failure_text(["X"], "y" * 1000)) == 300
