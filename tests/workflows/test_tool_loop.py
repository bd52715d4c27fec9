"""The tool loop end to end: scripted model over real HTTP, real worker, real store."""

from __future__ import annotations

import json

from durable_loop.core.config import RuntimeConfig
from durable_loop.testing import reply
from tests.conftest import settings_for, unique
from tests.workflows.toolkit import ToolLog, recording_tools


def tool_messages(request) -> list[dict]:
    return [m for m in request.messages if m["role"] == "tool"]


async def test_happy_path_stores_transcript_and_reports_usage(loop_worker, scripted_llm):
    model, sid, log = unique("m"), unique("s"), ToolLog()
    scripted_llm.script(model, [reply.tool_call("add", {"a": 2, "b": 3}), reply.text("It is 5.")])
    async with loop_worker(recording_tools(log)) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, system_prompt="Be brief."))
        result = await w.sessions.send(sid, "what is 2+3?")
        status = await w.sessions.status(sid)
        stored = await w.store.read(sid)

    assert result.status == "completed", result
    assert result.reply == "It is 5."
    assert result.turns == 2
    assert [(t.name, t.ok, t.executed) for t in result.tool_calls] == [("add", True, True)]
    assert result.usage.input_tokens == 20 and result.usage.output_tokens == 10
    assert log.names() == ["add"]
    first, second = scripted_llm.requests(model)
    assert first.messages[0] == {"role": "system", "content": "Be brief."}
    assert first.messages[-1] == {"role": "user", "content": "what is 2+3?"}
    assert set(first.tool_names) == {"add", "nap", "flaky", "blob", "vault"}
    assert json.loads(tool_messages(second)[0]["content"])["data"] == 5
    assert [(m.seq, m.message.role) for m in stored] == [
        (0, "user"),
        (1, "assistant"),
        (2, "tool"),
        (3, "assistant"),
    ]
    assert result.reply_seq == 3
    assert status.messages_done == 1 and status.next_seq == 4 and status.state == "idle"
    assert status.last_result == result


async def test_multi_step_loop_feeds_each_result_to_the_next_turn(loop_worker, scripted_llm):
    model, sid, log = unique("m"), unique("s"), ToolLog()
    scripted_llm.script(
        model,
        [
            reply.tool_call("add", {"a": 1, "b": 2}),
            reply.tool_call("add", {"a": 3, "b": 4}),
            reply.tool_call("add", {"a": 3, "b": 7}),
            reply.text("10"),
        ],
    )
    async with loop_worker(recording_tools(log)) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        result = await w.sessions.send(sid, "sum things")
        tail = await w.sessions.tail(sid, limit=50)

    assert result.status == "completed" and result.reply == "10"
    assert result.turns == 4
    assert [t.turn for t in result.tool_calls] == [1, 2, 3]
    assert [e.args for e in log.executions] == [
        {"a": 1, "b": 2},
        {"a": 3, "b": 4},
        {"a": 3, "b": 7},
    ]
    requests = scripted_llm.requests(model)
    assert [len(tool_messages(r)) for r in requests] == [0, 1, 2, 3]
    assert [json.loads(m["content"])["data"] for m in tool_messages(requests[-1])] == [3, 7, 10]
    assert [e.seq for e in tail.entries] == list(range(8))


async def test_parallel_calls_run_concurrently_and_keep_emitted_order(loop_worker, scripted_llm):
    model, sid, log = unique("m"), unique("s"), ToolLog()
    calls = [
        ("nap", {"seconds": 1.5, "label": "slow"}, "c_slow"),
        ("nap", {"seconds": 1.0, "label": "mid"}, "c_mid"),
        ("nap", {"seconds": 0.5, "label": "fast"}, "c_fast"),
    ]
    scripted_llm.script(model, [reply.tool_calls(*calls), reply.text("done")])
    async with loop_worker(recording_tools(log)) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        result = await w.sessions.send(sid, "nap three times")
        stored = await w.store.read(sid)

    assert result.status == "completed", result
    # Concurrency shown by overlap, not by wall time: every nap started before any finished.
    assert max(e.started for e in log.executions) < min(e.finished for e in log.executions)
    finished_order = [e.args["label"] for e in sorted(log.executions, key=lambda e: e.finished)]
    assert finished_order == ["fast", "mid", "slow"]
    tool_rows = [m for m in stored if m.message.role == "tool"]
    assert [m.message.tool_call_id for m in tool_rows] == ["c_slow", "c_mid", "c_fast"]
    assert [m.seq for m in tool_rows] == [2, 3, 4]
    following = tool_messages(scripted_llm.requests(model)[1])
    assert [m["tool_call_id"] for m in following] == ["c_slow", "c_mid", "c_fast"]
    assert [json.loads(m["content"])["data"] for m in following] == ["slow", "mid", "fast"]
    assert [t.call_id for t in result.tool_calls] == ["c_slow", "c_mid", "c_fast"]


async def test_max_tool_calls_per_turn_ignores_the_extra_calls(loop_worker, scripted_llm):
    model, sid, log = unique("m"), unique("s"), ToolLog()
    scripted_llm.script(
        model,
        [
            reply.tool_calls(
                ("add", {"a": 1, "b": 1}), ("add", {"a": 2, "b": 2}), ("blob", {"size": 3})
            ),
            reply.text("ok"),
        ],
    )
    runtime = RuntimeConfig(max_tool_calls_per_turn=2)
    async with loop_worker(recording_tools(log)) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=runtime))
        result = await w.sessions.send(sid, "go")

    assert result.status == "completed"
    assert result.ignored_tool_calls == 1
    assert log.names() == ["add", "add"]
    assert [(t.name, t.executed, t.error_codes) for t in result.tool_calls] == [
        ("add", True, []),
        ("add", True, []),
        ("blob", False, ["TOO_MANY_TOOL_CALLS"]),
    ]
    refusal = json.loads(tool_messages(scripted_llm.requests(model)[1])[2]["content"])
    assert refusal["errors"][0]["code"] == "TOO_MANY_TOOL_CALLS"


async def test_parallel_tool_calls_false_runs_one_call_per_turn(loop_worker, scripted_llm):
    model, sid, log = unique("m"), unique("s"), ToolLog()
    scripted_llm.script(
        model,
        [
            reply.tool_calls(("add", {"a": 1, "b": 1}), ("add", {"a": 2, "b": 2})),
            reply.tool_call("add", {"a": 2, "b": 2}),
            reply.text("2 and 4"),
        ],
    )
    runtime = RuntimeConfig(parallel_tool_calls=False)
    async with loop_worker(recording_tools(log)) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=runtime))
        result = await w.sessions.send(sid, "go")

    assert result.status == "completed" and result.reply == "2 and 4"
    assert result.ignored_tool_calls == 1
    assert [e.args for e in log.executions] == [{"a": 1, "b": 1}, {"a": 2, "b": 2}]
    first = scripted_llm.requests(model)[0]
    assert first.body["parallel_tool_calls"] is False


async def test_request_overrides_are_merged_and_reserved_keys_ignored(loop_worker, scripted_llm):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.text("hi")])
    runtime = RuntimeConfig(
        request_overrides={
            "temperature": 0.2,
            "max_tokens": 64,
            "model": "other-model",
            "messages": [],
            "tools": [],
            "tool_choice": "none",
            "response_format": {"type": "json_object"},
        },
        tool_denylist="vault",
    )
    async with loop_worker(recording_tools(ToolLog())) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=runtime))
        result = await w.sessions.send(sid, "hello")

    assert result.status == "completed"
    (request,) = scripted_llm.requests(model)
    assert request.body["temperature"] == 0.2 and request.body["max_tokens"] == 64
    assert request.body["model"] == model
    assert request.messages == [{"role": "user", "content": "hello"}]
    assert set(request.tool_names) == {"add", "nap", "flaky", "blob"}
    assert request.body["tool_choice"] == "auto"
    assert "response_format" not in request.body
