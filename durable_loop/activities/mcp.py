"""Calling an MCP tool from the ``run_tool`` activity.

MCP tools are registered like any other tool, with a callable that forwards the call to
the worker's :class:`McpPool`. The activity therefore gives them the same argument
validation, timeout, output size bound and envelope as local tools; this module only turns
an MCP ``CallToolResult`` (or failure) into a value or a coded :class:`ToolFailure`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import mcp.types as mcp_types
from mcp import MCPError
from pydantic import JsonValue

from durable_loop.activities.mcp_pool import McpPool
from durable_loop.core.canonical_json import utf8_len
from durable_loop.core.errors import ErrorCode
from durable_loop.core.mcp import McpServerError
from durable_loop.core.registry import ToolFailure


def content_to_json(block: mcp_types.ContentBlock) -> JsonValue:
    """One content block as JSON for the model; binary payloads become a short description."""
    if isinstance(block, mcp_types.TextContent):
        return {"type": "text", "text": block.text}
    if isinstance(block, mcp_types.ImageContent | mcp_types.AudioContent):
        return {
            "type": block.type,
            "mime_type": block.mime_type,
            "base64_bytes": utf8_len(block.data),
            "note": "binary content is not passed to the model",
        }
    if isinstance(block, mcp_types.ResourceLink):
        return {"type": "resource_link", "uri": str(block.uri), "name": block.name}
    if isinstance(block, mcp_types.EmbeddedResource):
        resource = block.resource
        if isinstance(resource, mcp_types.TextResourceContents):
            return {"type": "resource", "uri": str(resource.uri), "text": resource.text}
        return {"type": "resource", "uri": str(resource.uri), "note": "binary resource omitted"}
    return {"type": getattr(block, "type", "unknown")}


def result_to_json(result: mcp_types.CallToolResult) -> JsonValue:
    """Structured content when the server gives it; else the text (one block) or the blocks."""
    if result.structured_content is not None:
        data: JsonValue = result.structured_content
        return data
    blocks = [content_to_json(b) for b in result.content]
    if len(blocks) == 1 and isinstance(blocks[0], dict) and blocks[0].get("type") == "text":
        return blocks[0]["text"]
    return blocks


def error_text(result: mcp_types.CallToolResult) -> str:
    texts = [b.text for b in result.content if isinstance(b, mcp_types.TextContent)]
    return " ".join(texts)[:2000] or "no details"


def mcp_invoker(pool: McpPool, server: str, tool: str) -> Callable[..., Awaitable[JsonValue]]:
    """The callable registered for one MCP tool (keyword arguments are the tool's arguments)."""

    async def call_mcp_tool(**arguments: object) -> JsonValue:
        where = f"MCP tool {tool!r} on server {server!r}"
        try:
            result = await pool.call(server, tool, arguments)
        except McpServerError as err:
            raise ToolFailure(ErrorCode.TOOL_ERROR, f"{where}: {err.coded()}") from None
        except MCPError as err:
            raise ToolFailure(
                ErrorCode.TOOL_ERROR, f"{where} failed with MCP error {err.code}: {err}"
            ) from None
        if result.is_error:
            raise ToolFailure(ErrorCode.TOOL_ERROR, f"{where} reported: {error_text(result)}")
        return result_to_json(result)

    call_mcp_tool.__name__ = f"mcp_{server}_{tool}"
    return call_mcp_tool
