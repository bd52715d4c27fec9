"""provider_normalization: what the default accepts and what strict shapes refuse, for the
two shapes the README lists that the adapter used to accept regardless (blank arguments,
the legacy function_call)."""

from __future__ import annotations

from durable_loop.core.config import RuntimeConfig
from durable_loop.testing import Reply, reply
from tests.conftest import settings_for, unique
from tests.workflows.toolkit import ToolLog, recording_tools

STRICT = RuntimeConfig(provider_normalization=False)
LEGACY = Reply(
    body={
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "function_call": {"name": "vault", "arguments": "{}"},
                },
                "finish_reason": "function_call",
            }
        ]
    }
)


async def run(loop_worker, scripted_llm, steps, runtime=None):
    model, sid, log = unique("m"), unique("s"), ToolLog()
    scripted_llm.script(model, steps)
    async with loop_worker(recording_tools(log)) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=runtime))
        result = await w.sessions.send(sid, "go")
    return result, scripted_llm.requests(model), log


def sent_arguments(request) -> list[str]:
    return [
        call["function"]["arguments"]
        for m in request.messages
        if m["role"] == "assistant"
        for call in m.get("tool_calls") or []
    ]


async def test_blank_arguments_are_empty_by_default_and_sent_back_as_such(
    loop_worker, scripted_llm
):
    result, requests, log = await run(
        loop_worker, scripted_llm, [reply.tool_call("vault", ""), reply.text("done")]
    )
    assert [(t.executed, t.ok) for t in result.tool_calls] == [(True, True)]
    assert log.names() == ["vault"] and sent_arguments(requests[1]) == ["{}"]


async def test_strict_shapes_refuse_blank_arguments_and_send_them_back_as_they_came(
    loop_worker, scripted_llm
):
    result, requests, log = await run(
        loop_worker, scripted_llm, [reply.tool_call("vault", ""), reply.text("done")], STRICT
    )
    assert [(t.executed, t.error_codes) for t in result.tool_calls] == [(False, ["INVALID_JSON"])]
    assert log.names() == [] and sent_arguments(requests[1]) == [""]


async def test_legacy_function_call_is_normalised_by_default(loop_worker, scripted_llm):
    result, _, log = await run(loop_worker, scripted_llm, [LEGACY, reply.text("done")])
    assert result.status == "completed" and log.names() == ["vault"]


async def test_strict_shapes_refuse_the_legacy_function_call(loop_worker, scripted_llm):
    result, _, log = await run(loop_worker, scripted_llm, [LEGACY], STRICT)
    assert result.status == "failed" and result.error is not None
    assert result.error.code == "PROVIDER_BAD_RESPONSE"
    assert "assistant_function_call_to_tool_calls" in result.error.message
    assert log.names() == []
