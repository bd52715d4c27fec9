"""A small MCP server written with the official SDK, run as a subprocess by the MCP tests.

``--mode normal`` serves a few tools, one of which kills the process mid-call;
``--mode hang`` never answers the handshake; ``--mode bad-schema`` lists a tool whose
input schema is not valid JSON Schema. ``--http PORT`` serves streamable HTTP instead of stdio.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import Tool


def build(mode: str) -> MCPServer:
    server = MCPServer("toy", log_level="WARNING")

    @server.tool(name="Shout-Text", description="Upper-case a text.")
    def shout(text: str) -> str:
        return text.upper()

    @server.tool(description="Add two integers.")
    def add_numbers(a: int, b: int) -> int:
        return a + b

    @server.tool(description="The server's process id.")
    def server_pid() -> int:
        return os.getpid()

    @server.tool(description="Exit the server process in the middle of the call.")
    def crash_now(reason: str) -> str:
        sys.stderr.write(f"toy server crashing on purpose: {reason}\n")
        sys.stderr.flush()
        os._exit(3)

    @server.tool(description="Sleep, then answer.")
    async def sleep_for(seconds: float) -> str:
        await asyncio.sleep(seconds)
        return f"slept {seconds}"

    @server.tool(description="Fail with a tool error.")
    def refuse(reason: str) -> str:
        raise ToolError(f"refused: {reason}")

    @server.tool(description="Length of an environment variable of the server (-1: unset).")
    def env_length(name: str) -> int:
        return len(os.environ.get(name, "")) if name in os.environ else -1

    @server.tool(description="Length of an HTTP request header (-1: absent).")
    def header_length(name: str, ctx: Context) -> int:
        headers = ctx.headers or {}
        value = headers.get(name.lower()) or headers.get(name)
        return -1 if value is None else len(value)

    @server.tool(description="A long text.")
    def big_text(size: int) -> str:
        return "x" * size

    if mode == "bad-schema":
        listed = server.list_tools

        async def with_a_broken_schema() -> list[Tool]:
            tools = await listed()
            broken = Tool(
                name="broken",
                description="its schema is not JSON Schema",
                input_schema={"type": "object", "properties": {"x": {"type": "strin"}}},
            )
            return [*tools, broken]

        server.list_tools = with_a_broken_schema  # type: ignore[method-assign]
    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="normal", choices=["normal", "hang", "bad-schema"])
    parser.add_argument("--http", type=int, default=0)
    args = parser.parse_args()
    if args.mode == "hang":
        time.sleep(3600)
        return
    server = build(args.mode)
    if args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        server.run()


if __name__ == "__main__":
    main()
