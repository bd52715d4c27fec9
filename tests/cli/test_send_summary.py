"""What ``durable-loop send`` prints after the reply: turn numbers say which numbering
they are (issue 19, item 7)."""

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
