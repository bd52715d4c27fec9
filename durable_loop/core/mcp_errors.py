"""Coded MCP failures; every message names the server it is about."""

from __future__ import annotations

from enum import StrEnum

from durable_loop.core.errors import ConfigError


class McpErrorCode(StrEnum):
    UNAVAILABLE = "MCP_SERVER_UNAVAILABLE"
    START_TIMEOUT = "MCP_SERVER_START_TIMEOUT"
    BAD_SCHEMA = "MCP_BAD_SCHEMA"
    BAD_LISTING = "MCP_BAD_LISTING"
    CONFIG = "MCP_CONFIG_ERROR"
    DISCONNECTED = "MCP_SERVER_DISCONNECTED"


class McpServerError(ConfigError):
    """A server this worker cannot use; ``str()`` names it, ``code`` says what failed."""

    def __init__(self, code: McpErrorCode, server: str, message: str) -> None:
        self.code = code  # type: ignore[assignment]
        self.server = server
        self.message = message
        super().__init__(f"MCP server {server!r}: {message}")

    def coded(self) -> str:
        return f"{self.code}: {self}"
