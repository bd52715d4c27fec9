"""Listing and calling real MCP servers through the worker's pool (no Temporal here)."""

from __future__ import annotations

import sys

import pytest

from durable_loop.core.errors import ErrorCode
from durable_loop.core.registry import ToolContext, ToolFailure
from durable_loop.tools.mcp import (
    McpPool,
    McpServerConfig,
    McpServerError,
    mcp_registry,
)
from tests.tools.mcp.conftest import TOY, everything, filesystem, needs_node, toy

CTX = ToolContext(
    session_id="s", workflow_id="w", call_id="c", turn=1, attempt=1, idempotency_key="k"
)


async def call(registry, tool, **arguments):
    return await registry.get(tool).call(arguments, CTX)


@needs_node
async def test_reference_servers_are_listed_into_one_ensemble_each(tmp_path):
    (tmp_path / "hello.txt").write_text("hello from disk")
    async with McpPool([everything(), filesystem(tmp_path), toy()]) as pool:
        registry, mapping = await mcp_registry(pool)
        assert mapping["everything_get_sum"] == ("everything", "get-sum")
        assert mapping["files_read_text_file"] == ("files", "read_text_file")
        assert mapping["toy_shout_text"] == ("toy", "Shout-Text")
        specs = registry.catalog().by_name()
        assert {specs[n].ensemble for n in mapping} == {"everything", "files", "toy"}
        assert specs["everything_echo"].parameters["required"] == ["message"]
        assert await call(registry, "everything_echo", message="hi") == "Echo: hi"
        assert "3" in str(await call(registry, "everything_get_sum", a=1, b=2))
        path = str(tmp_path / "hello.txt")
        assert "hello from disk" in str(await call(registry, "files_read_text_file", path=path))
        assert await call(registry, "toy_shout_text", text="hey") == {"result": "HEY"}


async def test_tool_errors_become_coded_failures():
    async with McpPool([toy()]) as pool:
        registry, _ = await mcp_registry(pool)
        with pytest.raises(ToolFailure) as err:
            await call(registry, "toy_refuse", reason="no way")
    assert err.value.code == "TOOL_ERROR"
    assert "'refuse' on server 'toy'" in err.value.message and "no way" in err.value.message


async def test_a_crash_mid_call_fails_that_call_and_the_next_call_reconnects():
    async with McpPool([toy()]) as pool:
        registry, _ = await mcp_registry(pool)
        before = await call(registry, "toy_server_pid")
        with pytest.raises(ToolFailure) as err:
            await call(registry, "toy_crash_now", reason="test")
        after = await call(registry, "toy_server_pid")
        assert pool.opened["toy"] == 2
    assert err.value.code == "TOOL_ERROR"
    assert "MCP_SERVER_DISCONNECTED" in err.value.message and "'toy'" in err.value.message
    assert before != after


async def test_missing_server_is_a_coded_error_naming_it():
    missing = McpServerConfig(name="ghost", command="/no/such/mcp-server")
    async with McpPool([missing]) as pool:
        with pytest.raises(McpServerError) as err:
            await mcp_registry(pool)
    assert err.value.code is ErrorCode.MCP_SERVER_UNAVAILABLE and err.value.server == "ghost"
    assert err.value.coded().startswith("MCP_SERVER_UNAVAILABLE: MCP server 'ghost'")


async def test_server_that_hangs_at_start_times_out_with_a_code():
    async with McpPool([toy("hang", startup_timeout_s=1.5)]) as pool:
        with pytest.raises(McpServerError) as err:
            await mcp_registry(pool)
    assert err.value.code is ErrorCode.MCP_SERVER_START_TIMEOUT and err.value.server == "toy"


async def test_malformed_schema_refuses_the_server_or_skips_the_tool():
    async with McpPool([toy("bad-schema")]) as pool:
        with pytest.raises(McpServerError) as err:
            await mcp_registry(pool)
    assert err.value.code is ErrorCode.MCP_BAD_SCHEMA and err.value.server == "toy"
    assert "tool 'broken'" in str(err.value) and "properties.x.type" in str(err.value)
    async with McpPool([toy("bad-schema", skip_invalid_tools=True)]) as pool:
        _registry, mapping = await mcp_registry(pool)
    assert "toy_broken" not in mapping and "toy_shout_text" in mapping


async def test_optional_server_that_fails_is_left_out():
    broken = McpServerConfig(name="ghost", command="/no/such/mcp-server", required=False)
    async with McpPool([broken, toy()]) as pool:
        _registry, mapping = await mcp_registry(pool)
    assert {server for server, _ in mapping.values()} == {"toy"}


async def test_environment_of_a_stdio_server_is_expanded_from_the_worker():
    config = McpServerConfig(
        name="toy",
        command=sys.executable,
        args=[str(TOY)],
        env={"TOY_TOKEN": "${WORKER_SECRET}"},
    )
    async with McpPool([config], environ={"WORKER_SECRET": "twelve-chars"}) as pool:
        registry, _ = await mcp_registry(pool)
        assert await call(registry, "toy_env_length", name="TOY_TOKEN") == {"result": 12}


async def test_streamable_http_with_headers(toy_http_url):
    config = McpServerConfig(
        name="web", url=toy_http_url, headers={"X-Api-Key": "${WEB_KEY}"}, tool_prefix=""
    )
    async with McpPool([config], environ={"WEB_KEY": "0123456789"}) as pool:
        registry, mapping = await mcp_registry(pool)
        assert mapping["shout_text"] == ("web", "Shout-Text")
        assert await call(registry, "header_length", name="x-api-key") == {"result": 10}
        assert await call(registry, "add_numbers", a=2, b=40) == {"result": 42}


@needs_node
async def test_reference_server_over_streamable_http(everything_http_url):
    async with McpPool([McpServerConfig(name="remote", url=everything_http_url)]) as pool:
        registry, _ = await mcp_registry(pool)
        assert await call(registry, "remote_echo", message="over http") == "Echo: over http"


async def test_requires_approval_marks_the_listed_tools_of_a_server():
    async with McpPool(
        [toy(requires_approval=["refuse"]), toy(name="all", requires_approval=True)]
    ) as pool:
        registry, _ = await mcp_registry(pool)
    specs = registry.catalog().by_name()
    assert specs["toy_refuse"].requires_approval
    assert not specs["toy_shout_text"].requires_approval
    assert all(s.requires_approval for n, s in specs.items() if n.startswith("all_"))


async def test_effect_marks_the_listed_tools_of_a_server_once():
    async with McpPool([toy(effect={"refuse": "once"}), toy(name="all", effect="once")]) as pool:
        registry, _ = await mcp_registry(pool)
    specs = registry.catalog().by_name()
    assert specs["toy_refuse"].effect == "once"
    assert specs["toy_shout_text"].effect == "repeatable"
    assert all(s.effect == "once" for n, s in specs.items() if n.startswith("all_"))
