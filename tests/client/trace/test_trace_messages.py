"""The trace per message: fallbacks and retries inside one turn, messages that ended
without a turn, and counts that match the RunResults (issue 19, items 5-7)."""

from __future__ import annotations

from rich.console import Console

from durable_loop.client.trace import build_trace, decode_run
from durable_loop.client.trace.models import Trace
from durable_loop.client.trace.render import print_trace
from durable_loop.core import names
from durable_loop.core.config import RuntimeConfig
from durable_loop.core.retry import RetrySettings
from durable_loop.testing import reply
from tests.client.trace.test_trace_sessions import trace_of
from tests.conftest import settings_for, unique
from tests.workflows.test_fallback import endpoint
from tests.workflows.toolkit import ToolLog, recording_tools

TWO_ATTEMPTS = RetrySettings(initial_interval_s=0.1, maximum_interval_s=0.2, maximum_attempts=2)


def rendered(trace: Trace) -> str:
    console = Console(record=True, width=220)
    print_trace(trace, console)
    return console.export_text()


async def test_a_message_that_fell_back_is_shown_once_with_its_attempts(loop_worker, scripted_llm):
    primary, backup, sid = unique("primary"), unique("backup"), unique("s")
    scripted_llm.script(primary, [reply.error(503)] * 4)
    scripted_llm.script(
        backup, [reply.tool_call("add", {"a": 2, "b": 3}, call_id="c-1"), reply.text("5")]
    )
    settings = settings_for(scripted_llm, primary, retry=TWO_ATTEMPTS).model_copy(
        update={"fallback_llms": [endpoint(scripted_llm, backup)]}
    )
    async with loop_worker(recording_tools(ToolLog())) as w:
        await w.sessions.start(sid, settings)
        result = await w.sessions.send(sid, "what is 2+3?")
        trace = await trace_of(w, sid)
    assert result.status == "completed" and result.turns == 2, result

    assert [t.turn for t in trace.turns] == [1, 2]
    first, second = trace.turns
    assert [(a.model, a.attempts, a.ok) for a in first.attempts] == [
        (primary, 2, False),
        (backup, 1, True),
    ]
    failed, answered = first.attempts
    assert failed.error is not None and failed.error.code == "HTTP_503"
    assert failed.elapsed_ms is not None and failed.elapsed_ms > 0
    assert answered.elapsed_ms is not None
    # The primary's circuit opened on turn 1: turn 2 skips it without an attempt.
    assert [(a.model, a.attempts, a.ok) for a in second.attempts] == [
        (primary, 0, False),
        (backup, 1, True),
    ]
    assert second.attempts[0].error is not None
    assert second.attempts[0].error.code == "CIRCUIT_OPEN"
    assert "skipped (circuit open)" in rendered(trace)
    for turn in trace.turns:
        assert turn.model == backup and turn.error is None
    (message,) = trace.by_message
    assert message.message_id == result.message_id
    assert message.session_turns == result.session_turns == [1, 2]
    assert message.status == "completed"
    assert trace.runs[0].turns == 2

    text = rendered(trace)
    assert text.count("user: what is 2+3?") == 1
    assert "turns: 2 " in text and "LLM attempts: 4" in text
    assert f"{primary} 2× HTTP_503" in text


async def test_a_message_stopped_by_the_budget_is_shown_with_its_code(loop_worker, scripted_llm):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model, [reply.text("hello", usage={"prompt_tokens": 40, "completion_tokens": 20})]
    )
    runtime = RuntimeConfig(max_session_tokens=50)
    async with loop_worker() as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=runtime))
        first = await w.sessions.send(sid, "first message")
        second = await w.sessions.send(sid, "second message")
        trace = await trace_of(w, sid)
        histories = await w.histories(sid)
    assert second.status == "failed" and second.turns == 0
    assert second.error is not None and second.error.code == "BUDGET_EXCEEDED"

    assert [(m.message_id, m.user_text, m.status) for m in trace.by_message] == [
        (first.message_id, "first message", "completed"),
        (second.message_id, "second message", "failed"),
    ]
    stopped = trace.by_message[1]
    assert stopped.session_turns == [] and stopped.error == second.error
    text = rendered(trace)
    assert "user: second message" in text and "BUDGET_EXCEEDED" in text
    assert "messages: 2 (1 completed, 1 failed) · turns: 1 " in text

    runs = [decode_run(h.events, h.run_id, i) for i, h in enumerate(histories)]
    history_only = build_trace(sid, names.session_workflow_id(sid), runs, None)
    assert [(m.message_id, m.status) for m in history_only.by_message] == [
        (first.message_id, "completed"),
        (second.message_id, "failed"),
    ]
    assert history_only.by_message[1].user_text is None
    text = rendered(history_only)
    assert "BUDGET_EXCEEDED" in text
    assert "0 stored" not in text
    assert "transcript store not read" in text


async def test_turns_are_numbered_across_the_session_and_named_so(loop_worker, scripted_llm):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model,
        [
            reply.text("hi"),
            reply.tool_call("add", {"a": 1, "b": 2}, call_id="c-1"),
            reply.text("3"),
        ],
    )
    async with loop_worker(recording_tools(ToolLog())) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        first = await w.sessions.send(sid, "hello")
        second = await w.sessions.send(sid, "1+2?")
        trace = await trace_of(w, sid)
    assert (first.turns, first.session_turns) == (1, [1])
    assert (second.turns, second.session_turns) == (2, [2, 3])
    assert [c.turn for c in second.tool_calls] == [2]
    headings = [line.split(" · ")[0] for line in rendered(trace).splitlines()]
    assert [h for h in headings if h.startswith("turn ")] == ["turn 1", "turn 2", "turn 3"]
