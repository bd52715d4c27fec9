"""The one error vocabulary: every code the runtime uses, and the root of its exceptions.

A code is a stable string: it travels in tool-result envelopes, run results, activity
failures (the ``ApplicationError`` type), Update refusals, HTTP error bodies and CLI lines,
and it is stored in workflow histories, so a value never changes once released.
``docs/architecture.md`` (Errors) lists every one with its meaning; a test keeps the two
equal. Retryable HTTP statuses of a provider are a family of their own, ``HTTP_<status>``
(see :func:`http_status_code`), outside the enum.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel


class ErrorCode(StrEnum):
    # tool calls: envelopes of refused or failed calls
    TOOL_NOT_FOUND = "TOOL_NOT_FOUND"
    TOOL_NOT_ALLOWED = "TOOL_NOT_ALLOWED"
    INVALID_JSON = "INVALID_JSON"
    INVALID_ARGS = "INVALID_ARGS"
    ARGUMENTS_TOO_LARGE = "ARGUMENTS_TOO_LARGE"
    TOOL_OUTPUT_TOO_LARGE = "TOOL_OUTPUT_TOO_LARGE"
    TOOL_TIMEOUT = "TOOL_TIMEOUT"
    TOOL_ERROR = "TOOL_ERROR"
    REQUEST_IMPOSSIBLE = "REQUEST_IMPOSSIBLE"
    DUPLICATE_CALL_ID = "DUPLICATE_CALL_ID"
    TOO_MANY_TOOL_CALLS = "TOO_MANY_TOOL_CALLS"
    LOCKED = "LOCKED"
    TOOL_CALL_CANCELLED = "TOOL_CALL_CANCELLED"
    TOOL_CALL_IN_DOUBT = "TOOL_CALL_IN_DOUBT"
    SUB_AGENT_FAILED = "SUB_AGENT_FAILED"
    SUB_AGENT_TOO_DEEP = "SUB_AGENT_TOO_DEEP"
    # how a message's loop ends
    MAX_TURNS = "MAX_TURNS"
    NO_TOOL_CALLS = "NO_TOOL_CALLS"
    EMPTY_FINAL = "EMPTY_FINAL"
    REPLY_NOT_AN_ANSWER = "REPLY_NOT_AN_ANSWER"
    BUDGET_EXCEEDED = "BUDGET_EXCEEDED"
    MESSAGE_CANCELLED = "MESSAGE_CANCELLED"
    OUTPUT_INVALID = "OUTPUT_INVALID"
    # providers (activity failures) and configuration
    PROVIDER_ERROR = "PROVIDER_ERROR"
    PROVIDER_AUTH = "PROVIDER_AUTH"
    PROVIDER_BAD_REQUEST = "PROVIDER_BAD_REQUEST"
    PROVIDER_BAD_RESPONSE = "PROVIDER_BAD_RESPONSE"
    PROVIDER_UNAVAILABLE = "PROVIDER_UNAVAILABLE"
    PROVIDER_UNREACHABLE = "PROVIDER_UNREACHABLE"
    CIRCUIT_OPEN = "CIRCUIT_OPEN"
    PROVIDER_BLOCKED = "PROVIDER_BLOCKED"
    CONFIG_ERROR = "CONFIG_ERROR"
    EXTRA_NOT_INSTALLED = "EXTRA_NOT_INSTALLED"
    # activities as a trace or a metric sees them
    TIMEOUT = "TIMEOUT"
    CANCELED = "CANCELED"
    ACTIVITY_FAILED = "ACTIVITY_FAILED"
    ERROR = "ERROR"
    # router -> executor pipeline
    SCHEMA_INVALID = "SCHEMA_INVALID"
    ROUTER_INVALID_OUTPUT = "ROUTER_INVALID_OUTPUT"
    EXECUTOR_INVALID_OUTPUT = "EXECUTOR_INVALID_OUTPUT"
    # workspace
    WORKSPACE_TOO_LARGE = "WORKSPACE_TOO_LARGE"
    STALE_VERSION = "STALE_VERSION"
    CONFLICT = "CONFLICT"
    # proposals, decisions and other Update refusals
    UNKNOWN_PROPOSAL = "UNKNOWN_PROPOSAL"
    ALREADY_DECIDED = "ALREADY_DECIDED"
    EXPIRED = "EXPIRED"
    FINGERPRINT_MISMATCH = "FINGERPRINT_MISMATCH"
    INVALID_DECISION = "INVALID_DECISION"
    UNKNOWN_TOOL_CALL = "UNKNOWN_TOOL_CALL"
    NOT_PENDING = "NOT_PENDING"
    APPROVER_NOT_ALLOWED = "APPROVER_NOT_ALLOWED"
    TOOL_CALL_REJECTED = "TOOL_CALL_REJECTED"
    TOOL_CALL_EXPIRED = "TOOL_CALL_EXPIRED"
    UNKNOWN_MESSAGE = "UNKNOWN_MESSAGE"
    FINGERPRINT_REQUIRED = "FINGERPRINT_REQUIRED"
    SESSION_CLOSED = "SESSION_CLOSED"
    DECISION_REFUSED = "DECISION_REFUSED"
    UPDATE_REFUSED = "UPDATE_REFUSED"
    IDEMPOTENCY_KEY_REUSED = "IDEMPOTENCY_KEY_REUSED"
    # run control: cancel_message refusals
    NOTHING_RUNNING = "NOTHING_RUNNING"
    MESSAGE_FINISHED = "MESSAGE_FINISHED"
    ALREADY_CANCELLED = "ALREADY_CANCELLED"
    # tool sources: descriptors, profiles, MCP servers
    DESCRIPTOR_INVALID = "DESCRIPTOR_INVALID"
    PROFILE_UNKNOWN_NAME = "PROFILE_UNKNOWN_NAME"
    MCP_SERVER_UNAVAILABLE = "MCP_SERVER_UNAVAILABLE"
    MCP_SERVER_START_TIMEOUT = "MCP_SERVER_START_TIMEOUT"
    MCP_BAD_SCHEMA = "MCP_BAD_SCHEMA"
    MCP_BAD_LISTING = "MCP_BAD_LISTING"
    MCP_CONFIG_ERROR = "MCP_CONFIG_ERROR"
    MCP_SERVER_DISCONNECTED = "MCP_SERVER_DISCONNECTED"
    # payload encryption
    CODEC_CONFIG = "CODEC_CONFIG"
    CODEC_KEY_UNKNOWN = "CODEC_KEY_UNKNOWN"
    CODEC_DECRYPT_FAILED = "CODEC_DECRYPT_FAILED"
    CODEC_BAD_PAYLOAD = "CODEC_BAD_PAYLOAD"
    CODEC_BAD_REQUEST = "CODEC_BAD_REQUEST"
    NO_CODEC_TOKENS = "NO_CODEC_TOKENS"
    # Temporal and sessions, as clients meet them
    TEMPORAL_UNREACHABLE = "TEMPORAL_UNREACHABLE"
    TEMPORAL_UNAVAILABLE = "TEMPORAL_UNAVAILABLE"
    TEMPORAL_AUTH = "TEMPORAL_AUTH"
    TEMPORAL_ERROR = "TEMPORAL_ERROR"
    NAMESPACE_NOT_FOUND = "NAMESPACE_NOT_FOUND"
    SESSION_NOT_FOUND = "SESSION_NOT_FOUND"
    INVALID_SESSION_ID = "INVALID_SESSION_ID"
    QUERY_FAILED = "QUERY_FAILED"
    NO_REPLY = "NO_REPLY"
    REPLY_PENDING = "REPLY_PENDING"
    STORE_NOT_FOUND = "STORE_NOT_FOUND"
    # the HTTP service
    INVALID_REQUEST = "INVALID_REQUEST"
    NOT_FOUND = "NOT_FOUND"
    METHOD_NOT_ALLOWED = "METHOD_NOT_ALLOWED"
    HTTP_ERROR = "HTTP_ERROR"
    MESSAGE_TOO_LARGE = "MESSAGE_TOO_LARGE"
    BODY_TOO_LARGE = "BODY_TOO_LARGE"
    UNAUTHENTICATED = "UNAUTHENTICATED"
    INVALID_TOKEN = "INVALID_TOKEN"
    INVALID_TOKENS = "INVALID_TOKENS"
    NO_API_TOKENS = "NO_API_TOKENS"
    # the command line and the processes it starts
    INVALID_SETTING = "INVALID_SETTING"
    NO_SESSION = "NO_SESSION"
    FILE_NOT_FOUND = "FILE_NOT_FOUND"
    PERMISSION_DENIED = "PERMISSION_DENIED"
    MISSING_BINARY = "MISSING_BINARY"
    DEV_SERVER_ERROR = "DEV_SERVER_ERROR"
    DEV_SERVER_EXITED = "DEV_SERVER_EXITED"
    MODEL_UNKNOWN = "MODEL_UNKNOWN"
    MODEL_MISSING = "MODEL_MISSING"
    MODEL_FETCH_FAILED = "MODEL_FETCH_FAILED"
    MODEL_PART_INVALID = "MODEL_PART_INVALID"
    MODEL_CHECKSUM_MISMATCH = "MODEL_CHECKSUM_MISMATCH"
    GGUF_INVALID = "GGUF_INVALID"
    LOCAL_LLM_NOT_READY = "LOCAL_LLM_NOT_READY"
    PORT_IN_USE = "PORT_IN_USE"
    # evals, the routing benchmark and chaos runs
    BAD_JSON = "BAD_JSON"
    BAD_MODEL_FILTER = "BAD_MODEL_FILTER"
    NO_MODELS = "NO_MODELS"
    MODEL_FILTER_UNSUPPORTED = "MODEL_FILTER_UNSUPPORTED"
    MISSING_MODEL = "MISSING_MODEL"
    NO_BASE_URL = "NO_BASE_URL"
    NO_API_KEY = "NO_API_KEY"
    NO_FALLBACK_MODEL = "NO_FALLBACK_MODEL"
    UNKNOWN_SCENARIO = "UNKNOWN_SCENARIO"
    UNKNOWN_PROFILE = "UNKNOWN_PROFILE"
    UNKNOWN_STRATEGY = "UNKNOWN_STRATEGY"
    UNKNOWN_PIPELINE = "UNKNOWN_PIPELINE"
    UNKNOWN_BEHAVIOUR = "UNKNOWN_BEHAVIOUR"
    ASSERTION_FAILED = "ASSERTION_FAILED"
    CHAOS_PROCESS_FAILED = "CHAOS_PROCESS_FAILED"

    @classmethod
    def known(cls, value: str | None) -> ErrorCode | None:
        """The member whose value is ``value``, or ``None`` for anything else."""
        if value is None:
            return None
        try:
            return cls(value)
        except ValueError:
            return None


FINAL_FAILURE_CODES = frozenset(
    {
        ErrorCode.REQUEST_IMPOSSIBLE,
        ErrorCode.TOOL_CALL_REJECTED,
        ErrorCode.TOOL_CALL_EXPIRED,
        ErrorCode.TOOL_CALL_IN_DOUBT,
    }
)
"""Tool-call failures that no corrected call can fix: the request has no result, a person
rejected the call, its approval expired, or whether its effect happened is unknown (a
repeat could do it twice). The model should tell the user, not retry."""

HTTP_STATUS_PREFIX = "HTTP_"


def http_status_code(status: int) -> str:
    """The code of a retryable HTTP status of a provider (``HTTP_429``, ``HTTP_503``)."""
    return f"{HTTP_STATUS_PREFIX}{status}"


def coded_text(code: ErrorCode | str, message: str) -> str:
    """How a code and its message read as one line: ``CODE: message``."""
    return f"{code}: {message}"


class CodedError(BaseModel):
    """A failure as a value: a stable code and a human-readable message."""

    code: str
    message: str

    def __str__(self) -> str:
        return coded_text(self.code, self.message)


class DurableLoopError(Exception):
    """The root of every exception the runtime raises on purpose: a ``code`` from
    :class:`ErrorCode` and a human ``message``.

    ``str()`` is the message; classes whose text has always led with the code set
    ``show_code`` (``CODE: message``). :meth:`coded` is that line either way, and
    :meth:`as_value` the failure as a :class:`CodedError`.
    """

    show_code: bool = False

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = ErrorCode(code)
        self.message = message

    def __str__(self) -> str:
        return self.coded() if self.show_code else self.message

    def coded(self) -> str:
        return coded_text(self.code, self.message)

    def as_value(self) -> CodedError:
        return CodedError(code=self.code, message=self.message)


class ConfigError(DurableLoopError, ValueError):
    """A malformed configuration; the message says what to set.

    ``show_code=True`` where the text must carry the code on its own: inside a Pydantic
    validator (its ``ValidationError`` keeps only ``str()`` of the error) and for settings
    refusals that are read as text."""

    def __init__(
        self, message: str, *, code: ErrorCode = ErrorCode.CONFIG_ERROR, show_code: bool = False
    ) -> None:
        super().__init__(code, message)
        self.show_code = show_code
