"""A full session against a scripted Anthropic Messages endpoint (real HTTP, real worker)."""

from __future__ import annotations

import json

from durable_loop.core.config import SessionSettings
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.testing import Reply
from durable_loop.testing import reply_anthropic as anthropic
from tests.conftest import FAST_RETRY, settings_for, unique
from tests.workflows.toolkit import ToolLog, recording_tools

KEY_ENV = "DURABLE_LOOP_TEST_ANTHROPIC_KEY"


def anthropic_settings(scripted_llm, model: str, **kw) -> SessionSettings:
    settings = settings_for(scripted_llm, model, **kw)
    endpoint = LlmEndpoint(
        provider="anthropic",
        model=model,
        base_url=scripted_llm.base_url,
        api_key_env=KEY_ENV,
        timeout_s=10.0,
        retry=FAST_RETRY,
        llm_options={"max_tokens": 256},
    )
    return settings.model_copy(update={"llm": endpoint})


async def test_parallel_tool_use_round_trip(loop_worker, scripted_llm):
    model, sid, log = unique("claude"), unique("s"), ToolLog()
    scripted_llm.script(
        model,
        [
            anthropic.tool_calls(
                ("add", {"a": 2, "b": 3}, "toolu_A"),
                ("add", {"a": 1, "b": 1}, "toolu_B"),
                content="Adding both.",
                usage={"input_tokens": 30, "output_tokens": 12, "cache_read_input_tokens": 100},
            ),
            anthropic.text("5 and 2", usage={"input_tokens": 150, "output_tokens": 4}),
        ],
    )
    settings = anthropic_settings(scripted_llm, model, system_prompt="Be brief.")
    async with loop_worker(recording_tools(log), environ={KEY_ENV: "sk-ant-test"}) as w:
        await w.sessions.start(sid, settings)
        result = await w.sessions.send(sid, "2+3 and 1+1?")
        stored = await w.store.read(sid)

    assert result.status == "completed", result
    assert result.reply == "5 and 2"
    assert [(t.call_id, t.ok) for t in result.tool_calls] == [("toolu_A", True), ("toolu_B", True)]
    assert sorted(e.args["a"] for e in log.executions) == [1, 2]
    assert result.usage.model_dump() == {
        "input_tokens": 280,
        "output_tokens": 16,
        "cached_tokens": 100,
    }
    first, second = scripted_llm.requests(model)
    assert first.path == second.path == "/v1/messages"
    assert first.headers["x-api-key"] == "sk-ant-test"
    assert first.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in first.headers
    assert first.body["system"] == "Be brief." and first.body["max_tokens"] == 256
    assert {t["name"] for t in first.body["tools"]} >= {"add"}
    assert all("input_schema" in t for t in first.body["tools"])
    roles = [m["role"] for m in second.body["messages"]]
    assert roles == ["user", "assistant", "user"]
    tool_turn = second.body["messages"][2]["content"]
    assert [(b["type"], b["tool_use_id"]) for b in tool_turn] == [
        ("tool_result", "toolu_A"),
        ("tool_result", "toolu_B"),
    ]
    assert [json.loads(b["content"])["data"] for b in tool_turn] == [5, 2]
    assert stored[1].message.tool_calls[0].arguments == '{"a":2,"b":3}'
    assert (
        stored[1].meta["provider"] == "anthropic"
        and stored[1].meta["finish_reason"] == "tool_calls"
    )


async def test_overloaded_529_is_retried(loop_worker, scripted_llm):
    model, sid = unique("claude"), unique("s")
    scripted_llm.script(model, [anthropic.overloaded(), anthropic.text("fine now")])
    async with loop_worker(environ={KEY_ENV: "k"}) as w:
        await w.sessions.start(sid, anthropic_settings(scripted_llm, model))
        result = await w.sessions.send(sid, "hi")
    assert result.status == "completed" and result.reply == "fine now"
    assert len(scripted_llm.requests(model)) == 2


async def test_unreadable_reply_is_a_coded_failure_and_the_session_goes_on(
    loop_worker, scripted_llm
):
    model, sid, log = unique("claude"), unique("s"), ToolLog()
    truncated = '{"id": "msg_1", "type": "message", "content": [{"type": "tool_use", "id": "tol'
    no_id = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "tool_use", "name": "add", "input": {"a": 1, "b": 1}}],
        "stop_reason": "tool_use",
    }
    scripted_llm.script(
        model,
        [Reply(raw=truncated), Reply(body=no_id), anthropic.text("recovered")],
    )
    async with loop_worker(recording_tools(log), environ={KEY_ENV: "k"}) as w:
        await w.sessions.start(sid, anthropic_settings(scripted_llm, model))
        first = await w.sessions.send(sid, "hi")
        second = await w.sessions.send(sid, "again")
        third = await w.sessions.send(sid, "and again")
    assert first.error is not None and first.error.code == "PROVIDER_BAD_RESPONSE"
    assert "response began" in first.error.message and '"tol' in first.error.message
    assert second.error is not None and "tool_use has no id" in second.error.message
    assert third.status == "completed" and third.reply == "recovered"
    assert log.executions == [] and len(scripted_llm.requests(model)) == 3
