"""The content-tag fallback turns tool calls written as text into executed tool calls."""

from __future__ import annotations

import json

from durable_loop.core import presets
from durable_loop.core.config import RuntimeConfig
from durable_loop.testing import reply
from tests.conftest import settings_for, unique
from tests.workflows.toolkit import ToolLog, recording_tools

TAGGED = 'Let me add.\n<tool_call>\n{"name": "add", "arguments": {"a": 2, "b": 3}}\n</tool_call>'


async def test_tagged_text_becomes_an_executed_call(loop_worker, scripted_llm):
    model, sid, log = unique("m"), unique("s"), ToolLog()
    scripted_llm.script(model, [reply.text(TAGGED), reply.text("It is 5.")])
    runtime = presets.apply(presets.content_tag_tool_call_fallback())
    async with loop_worker(recording_tools(log)) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=runtime))
        result = await w.sessions.send(sid, "2+3?")
        stored = await w.store.read(sid)

    assert result.status == "completed" and result.reply == "It is 5."
    assert log.names() == ["add"] and log.executions[0].args == {"a": 2, "b": 3}
    assert [(t.name, t.ok, t.call_id) for t in result.tool_calls] == [("add", True, "dlc_1_0")]
    assistant = stored[1]
    assert assistant.message.content == "Let me add."
    assert assistant.meta["finish_reason"] == "tool_calls"
    second = scripted_llm.requests(model)[1]
    sent = second.messages[1]
    assert sent["tool_calls"][0]["id"] == "dlc_1_0"
    assert json.loads(second.messages[2]["content"])["data"] == 5


async def test_without_the_transform_the_text_is_the_answer_with_a_warning(
    loop_worker, scripted_llm
):
    model, sid, log = unique("m"), unique("s"), ToolLog()
    scripted_llm.script(model, [reply.text(TAGGED)])
    async with loop_worker(recording_tools(log)) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        result = await w.sessions.send(sid, "2+3?")
        trace = await w.sessions.trace(sid)
    assert result.status == "completed" and result.reply == TAGGED
    assert log.executions == [] and result.tool_calls == []
    [warning] = result.warnings
    assert "not executed" in warning
    assert "assistant_content_tool_call_tags_to_tool_calls" in warning
    assert trace.turns[0].warnings == [warning]


async def test_local_model_preset_recovers_fenced_json_calls(loop_worker, scripted_llm):
    model, sid, log = unique("m"), unique("s"), ToolLog()
    fenced = '```json\n{"name": "add", "arguments": {"a": 20, "b": 22}}\n```'
    gate = reply.text('{"tool": "add"}')
    scripted_llm.script(model, [gate, reply.text(fenced), reply.text("42")])
    runtime = presets.apply(presets.for_model("openai", "qwen2.5-coder-local"))
    assert isinstance(runtime, RuntimeConfig)
    async with loop_worker(recording_tools(log)) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=runtime))
        result = await w.sessions.send(sid, "20+22?")
    assert result.status == "completed" and result.reply == "42"
    assert log.executions[0].args == {"a": 20, "b": 22}
    asked, first = scripted_llm.requests(model)[:2]
    assert asked.body["response_format"]["json_schema"]["name"] == "conversation_gate"
    assert first.body["temperature"] == 0 and first.body["parallel_tool_calls"] is False
