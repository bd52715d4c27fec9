"""MCP tools through a real session: listed into the catalog, called as run_tool
activities with the same envelopes, timeouts and size bounds as local tools."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest_asyncio

from durable_loop.core.config import RuntimeConfig
from durable_loop.testing import reply
from durable_loop.testing.history import history_bytes
from durable_loop.tools.mcp import McpPool, McpServerConfig, mcp_registry
from tests.conftest import settings_for, unique
from tests.tools.mcp.conftest import TOY, everything, filesystem, needs_node, toy

SECRET = "mcp-secret-value-7f3a9c"


def envelopes(stored) -> list[dict]:
    return [json.loads(m.message.envelope.to_content()) for m in stored if m.message.role == "tool"]


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def toy_pool() -> AsyncIterator[McpPool]:
    config = McpServerConfig(
        name="toy",
        command=toy().command,
        args=[str(TOY)],
        env={"TOY_TOKEN": "${TOY_SECRET}"},
    )
    async with McpPool([config], environ={"TOY_SECRET": SECRET}) as pool:
        yield pool


@needs_node
async def test_reference_servers_through_a_session(loop_worker, scripted_llm, tmp_path):
    (tmp_path / "notes.txt").write_text("buy oat milk")
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model,
        [
            reply.tool_calls(
                ("everything_get_sum", {"a": 20, "b": 22}),
                ("files_read_text_file", {"path": str(tmp_path / "notes.txt")}),
            ),
            reply.text("42, and buy oat milk"),
        ],
    )
    async with McpPool([everything(), filesystem(tmp_path)]) as pool:
        registry, _ = await mcp_registry(pool)
        async with loop_worker(registry) as w:
            await w.sessions.start(sid, settings_for(scripted_llm, model))
            result = await w.sessions.send(sid, "add and read")
            stored = await w.store.read(sid)
    assert result.status == "completed", result
    assert [(t.name, t.ok) for t in result.tool_calls] == [
        ("everything_get_sum", True),
        ("files_read_text_file", True),
    ]
    first = scripted_llm.requests(model)[0]
    assert {"everything_echo", "files_list_directory"} <= set(first.tool_names)
    summed, read = envelopes(stored)
    assert summed["ok"] and "42" in json.dumps(summed["data"])
    assert read["ok"] and "buy oat milk" in json.dumps(read["data"])


async def test_crash_mid_call_is_a_tool_error_and_the_session_continues(
    loop_worker, scripted_llm, toy_pool
):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model,
        [
            reply.tool_call("toy_crash_now", {"reason": "mid-call"}),
            reply.text("the tool crashed"),
            reply.tool_call("toy_shout_text", {"text": "still here"}),
            reply.text("STILL HERE"),
        ],
    )
    registry, _ = await mcp_registry(toy_pool)
    async with loop_worker(registry) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        crashed = await w.sessions.send(sid, "crash it")
        after = await w.sessions.send(sid, "shout")
        stored = await w.store.read(sid)
    assert crashed.status == "completed" and crashed.reply == "the tool crashed"
    assert [(t.ok, t.error_codes) for t in crashed.tool_calls] == [(False, ["TOOL_ERROR"])]
    failure, shouted = envelopes(stored)
    message = failure["errors"][0]["message"]
    assert "MCP_SERVER_DISCONNECTED" in message and "'toy'" in message
    assert after.status == "completed" and shouted == {
        "ok": True,
        "data": {"result": "STILL HERE"},
        "warnings": [],
        "errors": [],
    }


async def test_timeouts_size_bounds_and_argument_checks_match_local_tools(
    loop_worker, scripted_llm
):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model,
        [
            reply.tool_calls(
                ("toy_sleep_for", {"seconds": 5}),
                ("toy_big_text", {"size": 5000}),
                ("toy_add_numbers", {"a": "two", "b": 2}),
            ),
            reply.text("done"),
        ],
    )
    runtime = RuntimeConfig(max_tool_output_bytes=1000)
    async with McpPool([toy(timeout_s=1.5)]) as pool:
        registry, _ = await mcp_registry(pool)
        assert registry.get("toy_sleep_for").spec.timeout_s == 1.5
        async with loop_worker(registry) as w:
            await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=runtime))
            result = await w.sessions.send(sid, "go")
    assert [t.error_codes for t in result.tool_calls] == [
        ["TOOL_TIMEOUT"],
        ["TOOL_OUTPUT_TOO_LARGE"],
        ["INVALID_ARGS"],
    ]


async def test_server_secrets_never_enter_history(loop_worker, scripted_llm, toy_pool):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model,
        [reply.tool_call("toy_env_length", {"name": "TOY_TOKEN"}), reply.text("set")],
    )
    registry, _ = await mcp_registry(toy_pool)
    async with loop_worker(registry) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        result = await w.sessions.send(sid, "is the token set?")
        stored = await w.store.read(sid)
        histories = await w.histories(sid)
    assert result.tool_calls[0].ok
    assert envelopes(stored)[0]["data"] == {"result": len(SECRET)}
    assert histories and all(SECRET.encode() not in history_bytes(h) for h in histories)
