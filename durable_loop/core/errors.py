"""Error codes shared by envelopes, run results and provider failures."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel


class ErrorCode(StrEnum):
    TOOL_NOT_FOUND = "TOOL_NOT_FOUND"
    TOOL_NOT_ALLOWED = "TOOL_NOT_ALLOWED"
    INVALID_JSON = "INVALID_JSON"
    INVALID_ARGS = "INVALID_ARGS"
    ARGUMENTS_TOO_LARGE = "ARGUMENTS_TOO_LARGE"
    TOOL_OUTPUT_TOO_LARGE = "TOOL_OUTPUT_TOO_LARGE"
    TOOL_TIMEOUT = "TOOL_TIMEOUT"
    TOOL_ERROR = "TOOL_ERROR"
    DUPLICATE_CALL_ID = "DUPLICATE_CALL_ID"
    TOO_MANY_TOOL_CALLS = "TOO_MANY_TOOL_CALLS"
    LOCKED = "LOCKED"
    MAX_TURNS = "MAX_TURNS"
    NO_TOOL_CALLS = "NO_TOOL_CALLS"
    EMPTY_FINAL = "EMPTY_FINAL"
    PROVIDER_ERROR = "PROVIDER_ERROR"
    PROVIDER_AUTH = "PROVIDER_AUTH"
    PROVIDER_BAD_REQUEST = "PROVIDER_BAD_REQUEST"
    PROVIDER_BAD_RESPONSE = "PROVIDER_BAD_RESPONSE"
    PROVIDER_UNAVAILABLE = "PROVIDER_UNAVAILABLE"
    CONFIG_ERROR = "CONFIG_ERROR"
    PROVIDER_BLOCKED = "PROVIDER_BLOCKED"
    BUDGET_EXCEEDED = "BUDGET_EXCEEDED"


class CodedError(BaseModel):
    """A failure as a value: a stable code and a human-readable message."""

    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class ConfigError(ValueError):
    """A malformed configuration; the message says what to set."""

    code = ErrorCode.CONFIG_ERROR
