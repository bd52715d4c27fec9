"""Coded MCP failures; every message names the server it is about."""

from __future__ import annotations

from enum import StrEnum


class McpErrorCode(StrEnum):
    UNAVAILABLE = "MCP_SERVER_UNAVAILABLE"
    START_TIMEOUT = "MCP_SERVER_START_TIMEOUT"
    BAD_SCHEMA = "MCP_BAD_SCHEMA"
    BAD_LISTING = "MCP_BAD_LISTING"
    CONFIG = "MCP_CONFIG_ERROR"
    DISCONNECTED = "MCP_SERVER_DISCONNECTED"


class McpServerError(Exception):
    def __init__(self, code: McpErrorCode, server: str, message: str) -> None:
        self.code = code
        self.server = server
        self.message = message
        super().__init__(f"{code}: MCP server {server!r}: {message}")
