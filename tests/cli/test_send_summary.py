"""What ``durable-loop send`` prints after the reply: turn numbers say which numbering
they are (issue 19, item 7), and the RunResult's warnings come under the summary."""

from __future__ import annotations

from durable_loop.cli.commands.send import summary_lines
from durable_loop.core.contracts import RunResult, ToolOutcome


def test_summary_names_session_turns():
    result = RunResult(
        message_id="m-2",
        status="completed",
        turns=2,
        session_turns=[2, 3],
        tool_calls=[ToolOutcome(turn=2, call_id="c-1", name="lookup_code", ok=True)],
    )
    head, call = summary_lines(result)
    assert "2 turn(s) (session turns 2-3)" in head
    assert call.strip() == "session turn 2: lookup_code [c-1] ok"


def test_summary_of_a_message_without_turns():
    result = RunResult(message_id="m-1", status="failed", turns=0)
    (head,) = summary_lines(result)
    assert "0 turn(s) ·" in head and "session turn" not in head


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
    assert lines[1] == "  session turn 1: add [c1] INVALID_ARGS (not run)"
    assert lines[-1] == "  warning: the reply wrote a call of 'add' as text"
