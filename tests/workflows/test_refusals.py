"""Calls the loop refuses: the tool never runs, the model reads a coded envelope and recovers."""

from __future__ import annotations

import json

from durable_loop.core.config import RuntimeConfig
from durable_loop.testing import reply
from tests.conftest import settings_for, unique
from tests.workflows.toolkit import ToolLog, recording_tools


def tool_envelopes(request) -> list[dict]:
    return [json.loads(m["content"]) for m in request.messages if m["role"] == "tool"]


async def run_session(loop_worker, scripted_llm, steps, runtime=None, log=None):
    model, sid = unique("m"), unique("s")
    log = log if log is not None else ToolLog()
    scripted_llm.script(model, steps)
    async with loop_worker(recording_tools(log)) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=runtime))
        result = await w.sessions.send(sid, "please")
        stored = await w.store.read(sid)
    return result, scripted_llm.requests(model), log, stored


async def test_invalid_json_is_refused_and_the_model_recovers(loop_worker, scripted_llm):
    result, requests, log, stored = await run_session(
        loop_worker,
        scripted_llm,
        [
            reply.tool_call("add", '{"a": 1, "b": '),
            reply.tool_call("add", {"a": 1, "b": 2}),
            reply.text("3"),
        ],
    )
    assert result.status == "completed" and result.reply == "3"
    assert [(t.executed, t.error_codes) for t in result.tool_calls] == [
        (False, ["INVALID_JSON"]),
        (True, []),
    ]
    assert [e.args for e in log.executions] == [{"a": 1, "b": 2}]
    refusal = tool_envelopes(requests[1])[0]
    assert refusal["ok"] is False and refusal["errors"][0]["code"] == "INVALID_JSON"
    # The malformed arguments stay in the transcript exactly as the model emitted them.
    assert stored[1].message.tool_calls[0].arguments == '{"a": 1, "b": '


async def test_wrong_types_and_missing_arguments_fail_validation(loop_worker, scripted_llm):
    result, requests, log, _ = await run_session(
        loop_worker,
        scripted_llm,
        [
            reply.tool_calls(("add", {"a": "one", "b": 2}), ("add", {"a": 1}), ("add", "")),
            reply.text("sorry"),
        ],
    )
    assert result.status == "completed"
    # executed means the tool's code ran: a call refused by validation did not run.
    assert [(t.executed, t.ok, t.error_codes) for t in result.tool_calls] == [
        (False, False, ["INVALID_ARGS"]),
        (False, False, ["INVALID_ARGS"]),
        (False, False, ["INVALID_ARGS"]),
    ]
    assert log.executions == []
    wrong_type, missing, blank = tool_envelopes(requests[1])
    assert "a: 'one' is not of type 'integer'" in wrong_type["errors"][0]["message"]
    assert "'b' is a required property" in missing["errors"][0]["message"]
    assert "'a' is a required property" in blank["errors"][0]["message"]


async def test_unknown_tool_is_reported_as_not_found(loop_worker, scripted_llm):
    result, requests, log, _ = await run_session(
        loop_worker,
        scripted_llm,
        [reply.tool_call("launch_rockets", {"count": 3}), reply.text("I cannot do that")],
    )
    assert result.status == "completed"
    assert [(t.name, t.executed, t.error_codes) for t in result.tool_calls] == [
        ("launch_rockets", False, ["TOOL_NOT_FOUND"])
    ]
    assert log.executions == []
    assert tool_envelopes(requests[1])[0]["errors"][0]["code"] == "TOOL_NOT_FOUND"


async def test_denylisted_tool_is_hidden_and_refused(loop_worker, scripted_llm):
    result, requests, log, _ = await run_session(
        loop_worker,
        scripted_llm,
        [reply.tool_call("vault", {}), reply.text("no access")],
        runtime=RuntimeConfig(tool_denylist="vault, blob"),
    )
    assert "vault" not in requests[0].tool_names and "blob" not in requests[0].tool_names
    assert set(requests[0].tool_names) == {"add", "nap", "flaky"}
    assert [(t.executed, t.error_codes) for t in result.tool_calls] == [
        (False, ["TOOL_NOT_ALLOWED"])
    ]
    assert log.executions == []
    assert tool_envelopes(requests[1])[0]["errors"][0]["code"] == "TOOL_NOT_ALLOWED"


async def test_allowlist_masks_every_other_tool(loop_worker, scripted_llm):
    result, requests, log, _ = await run_session(
        loop_worker,
        scripted_llm,
        [reply.tool_calls(("add", {"a": 1, "b": 1}), ("vault", {})), reply.text("2")],
        runtime=RuntimeConfig(tool_allowlist=["add"]),
    )
    assert requests[0].tool_names == ["add"]
    assert [(t.name, t.executed, t.error_codes) for t in result.tool_calls] == [
        ("add", True, []),
        ("vault", False, ["TOOL_NOT_ALLOWED"]),
    ]
    assert log.names() == ["add"]


async def test_duplicate_call_ids_in_one_turn(loop_worker, scripted_llm):
    result, requests, log, _ = await run_session(
        loop_worker,
        scripted_llm,
        [
            reply.tool_calls(("add", {"a": 1, "b": 1}, "same"), ("add", {"a": 5, "b": 5}, "same")),
            reply.text("2"),
        ],
    )
    assert [(t.executed, t.error_codes) for t in result.tool_calls] == [
        (True, []),
        (False, ["DUPLICATE_CALL_ID"]),
    ]
    assert [e.args for e in log.executions] == [{"a": 1, "b": 1}]
    first, second = tool_envelopes(requests[1])
    assert first["data"] == 2 and second["errors"][0]["code"] == "DUPLICATE_CALL_ID"


async def test_oversized_arguments_are_refused(loop_worker, scripted_llm):
    result, requests, log, _ = await run_session(
        loop_worker,
        scripted_llm,
        [reply.tool_call("nap", {"seconds": 0, "label": "z" * 500}), reply.text("too big")],
        runtime=RuntimeConfig(max_tool_args_bytes=100),
    )
    assert [(t.executed, t.error_codes) for t in result.tool_calls] == [
        (False, ["ARGUMENTS_TOO_LARGE"])
    ]
    assert log.executions == []
    message = tool_envelopes(requests[1])[0]["errors"][0]["message"]
    assert "the limit is 100" in message
    assert "The longest value is /label (500 chars)" in message


async def test_oversized_output_is_replaced_by_a_coded_error(loop_worker, scripted_llm):
    result, requests, log, stored = await run_session(
        loop_worker,
        scripted_llm,
        [reply.tool_call("blob", {"size": 5000}), reply.text("too much")],
        runtime=RuntimeConfig(max_tool_output_bytes=1000),
    )
    assert [(t.executed, t.ok, t.error_codes) for t in result.tool_calls] == [
        (True, False, ["TOOL_OUTPUT_TOO_LARGE"])
    ]
    assert log.names() == ["blob"]
    envelope = tool_envelopes(requests[1])[0]
    assert envelope["data"] is None and "5002 bytes" in envelope["errors"][0]["message"]
    assert stored[2].meta["output_bytes"] == 5002
