"""The trace built from real sessions: history of every run plus the transcript store."""

from __future__ import annotations

from rich.console import Console

from durable_loop.client.trace import build_trace, decode_run
from durable_loop.client.trace.models import Trace
from durable_loop.client.trace.render import print_trace
from durable_loop.core import names
from durable_loop.core.config import RuntimeConfig
from durable_loop.testing import reply
from tests.conftest import settings_for, unique
from tests.workflows.toolkit import ToolLog, recording_tools


def usage(prompt: int, completion: int) -> dict[str, int]:
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": 0}


async def trace_of(w, session_id: str) -> Trace:
    histories = await w.histories(session_id)
    runs = [decode_run(h.events, h.run_id, i) for i, h in enumerate(histories)]
    stored = await w.store.read(session_id)
    return build_trace(
        session_id,
        names.session_workflow_id(session_id),
        runs,
        stored,
        ui_url="http://127.0.0.1:8233",
    )


def calls_of(trace: Trace) -> list[list[tuple[str, str, bool | None, list[str], bool]]]:
    return [
        [(c.call_id, c.name, c.ok, c.error_codes, c.executed) for c in t.calls] for t in trace.turns
    ]


async def run_mixed_session(loop_worker, scripted_llm):
    """Two messages: executed, refused, failed and (at the end) store-only refusals."""
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model,
        [
            reply.tool_calls(
                ("add", {"a": 1, "b": 2}, "c-add"),
                ("nope", {}, "c-nope"),
                usage=usage(11, 3),
            ),
            reply.tool_call("flaky", {"reason": "x"}, call_id="c-flaky"),
            reply.text("first done", usage=usage(40, 7)),
            reply.tool_call("nope", {"n": 1}, call_id="c-n1"),
            reply.tool_call("nope", {"n": 2}, call_id="c-n2"),
            reply.tool_call("nope", {"n": 3}, call_id="c-n3"),
        ],
    )
    runtime = RuntimeConfig(max_turns=3, tool_failure_policy="tolerated")
    log = ToolLog()
    async with loop_worker(recording_tools(log)) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=runtime))
        first = await w.sessions.send(sid, "add things please")
        second = await w.sessions.send(sid, "call a missing tool")
        trace = await trace_of(w, sid)
    return sid, model, first, second, trace, log


async def test_trace_rows_join_history_and_store(loop_worker, scripted_llm):
    sid, model, first, second, trace, log = await run_mixed_session(loop_worker, scripted_llm)

    assert first.status == "completed", first
    assert second.status == "failed" and second.error.code == "MAX_TURNS"
    assert log.names() == ["add", "flaky"]
    assert [t.turn for t in trace.turns] == [1, 2, 3, 4, 5, 6]
    assert calls_of(trace) == [
        [("c-add", "add", True, [], True), ("c-nope", "nope", False, ["TOOL_NOT_FOUND"], False)],
        [("c-flaky", "flaky", False, ["TOOL_ERROR"], True)],
        [],
        [("c-n1", "nope", False, ["TOOL_NOT_FOUND"], False)],
        [("c-n2", "nope", False, ["TOOL_NOT_FOUND"], False)],
        [("c-n3", "nope", False, ["TOOL_NOT_FOUND"], False)],
    ]
    # refusals travel in the next llm_turn's appends; the last one only reaches the store
    assert [c.source for t in trace.turns for c in t.calls] == [
        "history",
        "history",
        "history",
        "history",
        "history",
        "store",
    ]
    first_turn, _, third = trace.turns[:3]
    assert (first_turn.input_tokens, first_turn.output_tokens) == (11, 3)
    assert (third.input_tokens, third.output_tokens) == (40, 7)
    assert trace.usage.input_tokens == sum(t.input_tokens or 0 for t in trace.turns)
    assert all(t.model == model and t.latency_ms is not None for t in trace.turns)
    assert all(len(t.plan_fingerprint) >= 12 for t in trace.turns)
    assert len({t.plan_fingerprint for t in trace.turns}) == 6
    assert [t.user_text for t in trace.turns] == [
        "add things please",
        None,
        None,
        "call a missing tool",
        None,
        None,
    ]
    assert trace.user_messages == 2 and trace.messages == 14
    assert [r.message_id for r in trace.message_results] == [first.message_id, second.message_id]
    assert trace.ui_url == f"http://127.0.0.1:8233/namespaces/default/workflows/session-{sid}"
    assert len(trace.runs) == 1 and trace.runs[0].turns == 6


async def test_trace_without_store_still_reports_history_results(loop_worker, scripted_llm):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model, [reply.tool_call("add", {"a": 2, "b": 2}, call_id="only"), reply.text("4")]
    )
    async with loop_worker(recording_tools(ToolLog())) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        await w.sessions.send(sid, "2+2")
        histories = await w.histories(sid)
    runs = [decode_run(h.events, h.run_id, i) for i, h in enumerate(histories)]
    trace = build_trace(sid, names.session_workflow_id(sid), runs, None)
    assert calls_of(trace) == [[("only", "add", True, [], True)], []]
    duration = trace.turns[0].calls[0].duration_ms
    assert duration is not None and duration > 0  # a sub-millisecond tool is not 0 ms
    assert trace.messages == 0 and trace.user_messages == 1 and trace.ui_url is None
    assert not trace.store_read


async def test_trace_follows_continue_as_new(loop_worker, scripted_llm):
    model, sid = unique("m"), unique("s")
    messages = 12
    script = []
    for i in range(messages):
        script.append(reply.tool_call("add", {"a": i, "b": 1}, call_id=f"m{i}"))
        script.append(reply.text(f"{i + 1}", usage=usage(100 + i, 10)))
    scripted_llm.script(model, script)
    runtime = RuntimeConfig(continue_as_new_after_events=200)
    async with loop_worker(recording_tools(ToolLog())) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=runtime))
        replies = [(await w.sessions.send(sid, f"add {i}")).reply for i in range(messages)]
        trace = await trace_of(w, sid)

    assert replies == [str(i + 1) for i in range(messages)]
    assert len(trace.runs) >= 2, [r.event_count for r in trace.runs]
    assert all(r.event_count <= 200 + 40 for r in trace.runs)
    assert [t.turn for t in trace.turns] == list(range(1, 2 * messages + 1))
    assert [[c.call_id for c in t.calls] for t in trace.turns[::2]] == [
        [f"m{i}"] for i in range(messages)
    ]
    assert all(c.ok and c.executed for t in trace.turns for c in t.calls)
    assert [t.input_tokens for t in trace.turns[1::2]] == [100 + i for i in range(messages)]
    run_of_turn = [t.run_index for t in trace.turns]
    assert run_of_turn == sorted(run_of_turn) and run_of_turn[-1] == len(trace.runs) - 1
    assert sum(r.turns for r in trace.runs) == 2 * messages
    assert trace.user_messages == messages and trace.messages == 4 * messages

    console = Console(record=True, width=200)
    print_trace(trace, console)
    text = console.export_text()
    last_run = len(trace.runs) - 1
    assert f"turn {2 * messages} (run {last_run}) · {model}" in text
    assert f"turns: {2 * messages}" in text
    assert f"runs: #0 {trace.runs[0].run_id[:8]}" in text
    assert "add m11 ok" in text
