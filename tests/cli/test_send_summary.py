"""``durable-loop send`` prints the RunResult's warnings under its summary."""

from __future__ import annotations

from durable_loop.cli.commands.send import summary_lines
from durable_loop.core.contracts import RunResult, ToolOutcome


def test_warnings_and_not_run_calls_are_in_the_summary():
    result = RunResult(
        message_id="m1",
        status="completed",
        reply="<tool_call>...</tool_call>",
        tool_calls=[
            ToolOutcome(
                turn=1,
                call_id="c1",
                name="add",
                ok=False,
                error_codes=["INVALID_ARGS"],
                executed=False,
            )
        ],
        warnings=["the reply wrote a call of 'add' as text"],
    )
    lines = summary_lines(result)
    assert lines[1] == "  turn 1: add [c1] INVALID_ARGS (not run)"
    assert lines[-1] == "  warning: the reply wrote a call of 'add' as text"
