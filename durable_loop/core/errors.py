"""The one error vocabulary: the runtime's codes, the base the layers' codes share, and
the root of the runtime's exceptions.

A code is a stable string: it travels in tool-result envelopes, run results, activity
failures (the ``ApplicationError`` type), Update refusals, HTTP error bodies and CLI lines,
and it is stored in workflow histories, so a value never changes once released.

:class:`ErrorCode` holds the codes of the runtime (everything the workflows, activities,
clients, worker and service produce), ordered in the families of :data:`FAMILIES`. Codes
that only a front end produces live beside it in that layer, as members of their own
:class:`Code` enum: ``durable_loop.cli.codes.CliCode`` (the command line and the processes
it starts), ``durable_loop.evals.codes.EvalCode`` and ``durable_loop.chaos.codes.ChaosCode``;
the pure core the workflow sandbox imports does not carry them. No value is in two enums.
``docs/architecture.md`` (Errors) lists every code, one table per family; a test keeps the
tables equal to the enums. Retryable HTTP statuses of a provider are a family of their own,
``HTTP_<status>`` (see :func:`http_status_code`), outside the enums.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Self

from pydantic import BaseModel


class Code(StrEnum):
    """The base of every code enum: :class:`ErrorCode` and the layers' own (no members)."""

    @classmethod
    def known(cls, value: str | None) -> Self | None:
        """The member whose value is ``value``, or ``None`` for anything else."""
        if value is None:
            return None
        try:
            return cls(value)
        except ValueError:
            return None


class ErrorCode(Code):
    """The runtime's codes, family by family (:data:`FAMILIES` names each family)."""

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
    ARGUMENTS_NOT_GIVEN = "ARGUMENTS_NOT_GIVEN"
    LOCKED = "LOCKED"
    TOOL_CALL_CANCELLED = "TOOL_CALL_CANCELLED"
    TOOL_CALL_IN_DOUBT = "TOOL_CALL_IN_DOUBT"
    SUB_AGENT_FAILED = "SUB_AGENT_FAILED"
    SUB_AGENT_TOO_DEEP = "SUB_AGENT_TOO_DEEP"
    # message outcomes: how a message's loop ends
    MAX_TURNS = "MAX_TURNS"
    NO_TOOL_CALLS = "NO_TOOL_CALLS"
    EMPTY_FINAL = "EMPTY_FINAL"
    REPLY_NOT_AN_ANSWER = "REPLY_NOT_AN_ANSWER"
    BUDGET_EXCEEDED = "BUDGET_EXCEEDED"
    MESSAGE_CANCELLED = "MESSAGE_CANCELLED"
    OUTPUT_INVALID = "OUTPUT_INVALID"
    # providers: LLM activity failures
    PROVIDER_ERROR = "PROVIDER_ERROR"
    PROVIDER_AUTH = "PROVIDER_AUTH"
    PROVIDER_BAD_REQUEST = "PROVIDER_BAD_REQUEST"
    PROVIDER_CONTEXT_EXCEEDED = "PROVIDER_CONTEXT_EXCEEDED"
    PROVIDER_BAD_RESPONSE = "PROVIDER_BAD_RESPONSE"
    PROVIDER_UNAVAILABLE = "PROVIDER_UNAVAILABLE"
    PROVIDER_UNREACHABLE = "PROVIDER_UNREACHABLE"
    CIRCUIT_OPEN = "CIRCUIT_OPEN"
    PROVIDER_BLOCKED = "PROVIDER_BLOCKED"
    # configuration and settings
    CONFIG_ERROR = "CONFIG_ERROR"
    EXTRA_NOT_INSTALLED = "EXTRA_NOT_INSTALLED"
    INVALID_SETTING = "INVALID_SETTING"
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
    # decisions and approvals: proposals and held tool calls
    UNKNOWN_PROPOSAL = "UNKNOWN_PROPOSAL"
    ALREADY_DECIDED = "ALREADY_DECIDED"
    EXPIRED = "EXPIRED"
    FINGERPRINT_MISMATCH = "FINGERPRINT_MISMATCH"
    INVALID_DECISION = "INVALID_DECISION"
    UNKNOWN_TOOL_CALL = "UNKNOWN_TOOL_CALL"
    APPROVER_NOT_ALLOWED = "APPROVER_NOT_ALLOWED"
    TOOL_CALL_REJECTED = "TOOL_CALL_REJECTED"
    TOOL_CALL_EXPIRED = "TOOL_CALL_EXPIRED"
    FINGERPRINT_REQUIRED = "FINGERPRINT_REQUIRED"
    # sessions and messages: other Update refusals, run control, reading a session
    UNKNOWN_MESSAGE = "UNKNOWN_MESSAGE"
    SESSION_CLOSED = "SESSION_CLOSED"
    UPDATE_REFUSED = "UPDATE_REFUSED"
    IDEMPOTENCY_KEY_REUSED = "IDEMPOTENCY_KEY_REUSED"
    NOTHING_RUNNING = "NOTHING_RUNNING"
    MESSAGE_FINISHED = "MESSAGE_FINISHED"
    ALREADY_CANCELLED = "ALREADY_CANCELLED"
    SESSION_NOT_FOUND = "SESSION_NOT_FOUND"
    INVALID_SESSION_ID = "INVALID_SESSION_ID"
    QUERY_FAILED = "QUERY_FAILED"
    REPLY_PENDING = "REPLY_PENDING"
    TURN_OUT_OF_RANGE = "TURN_OUT_OF_RANGE"
    SESSION_EXISTS = "SESSION_EXISTS"
    BUNDLE_VERSION_UNSUPPORTED = "BUNDLE_VERSION_UNSUPPORTED"
    STORE_NOT_FOUND = "STORE_NOT_FOUND"
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
    # Temporal, as clients meet it
    TEMPORAL_UNREACHABLE = "TEMPORAL_UNREACHABLE"
    TEMPORAL_UNAVAILABLE = "TEMPORAL_UNAVAILABLE"
    TEMPORAL_ERROR = "TEMPORAL_ERROR"
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


def _family(first: ErrorCode, last: ErrorCode) -> tuple[ErrorCode, ...]:
    members = list(ErrorCode)
    return tuple(members[members.index(first) : members.index(last) + 1])


FAMILIES: dict[str, tuple[ErrorCode, ...]] = {
    "Tool calls": _family(ErrorCode.TOOL_NOT_FOUND, ErrorCode.SUB_AGENT_TOO_DEEP),
    "Message outcomes": _family(ErrorCode.MAX_TURNS, ErrorCode.OUTPUT_INVALID),
    "Providers": _family(ErrorCode.PROVIDER_ERROR, ErrorCode.PROVIDER_BLOCKED),
    "Configuration": _family(ErrorCode.CONFIG_ERROR, ErrorCode.INVALID_SETTING),
    "Activities in traces and metrics": _family(ErrorCode.TIMEOUT, ErrorCode.ERROR),
    "Router": _family(ErrorCode.SCHEMA_INVALID, ErrorCode.EXECUTOR_INVALID_OUTPUT),
    "Workspace": _family(ErrorCode.WORKSPACE_TOO_LARGE, ErrorCode.CONFLICT),
    "Decisions and approvals": _family(ErrorCode.UNKNOWN_PROPOSAL, ErrorCode.FINGERPRINT_REQUIRED),
    "Sessions and messages": _family(ErrorCode.UNKNOWN_MESSAGE, ErrorCode.STORE_NOT_FOUND),
    "Tool sources": _family(ErrorCode.DESCRIPTOR_INVALID, ErrorCode.MCP_SERVER_DISCONNECTED),
    "Payload encryption": _family(ErrorCode.CODEC_CONFIG, ErrorCode.CODEC_BAD_REQUEST),
    "Temporal": _family(ErrorCode.TEMPORAL_UNREACHABLE, ErrorCode.TEMPORAL_ERROR),
    "HTTP service": _family(ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_TOKENS),
}
"""The runtime's codes by family, in declaration order: each member is in exactly one, and
``docs/architecture.md`` has one table per family under the same heading."""


FINAL_FAILURE_CODES = frozenset(
    {
        ErrorCode.REQUEST_IMPOSSIBLE,
        ErrorCode.TOOL_CALL_REJECTED,
        ErrorCode.TOOL_CALL_EXPIRED,
        ErrorCode.TOOL_CALL_IN_DOUBT,
        ErrorCode.ARGUMENTS_NOT_GIVEN,
    }
)
"""Tool-call failures that no corrected call can fix: the request has no result, a person
rejected the call, its approval expired, whether its effect happened is unknown (a
repeat could do it twice), or nobody asked for it or gave its values (``refuse_unasked_call``,
``ask_for_unsaid_values``). The model should tell the user, not retry."""

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
    """The root of every exception the runtime raises on purpose: a ``code`` (a member of
    :class:`ErrorCode`, or of a layer's own :class:`Code` enum) and a human ``message``.

    ``str()`` is the message; classes whose text has always led with the code set
    ``show_code`` (``CODE: message``). :meth:`coded` is that line either way, and
    :meth:`as_value` the failure as a :class:`CodedError`.
    """

    show_code: bool = False

    def __init__(self, code: Code, message: str) -> None:
        super().__init__(message)
        # a bare string is read as one of the runtime's codes (ValueError for anything else)
        self.code: Code = code if isinstance(code, Code) else ErrorCode(code)
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

    code: ErrorCode

    def __init__(
        self, message: str, *, code: ErrorCode = ErrorCode.CONFIG_ERROR, show_code: bool = False
    ) -> None:
        super().__init__(code, message)
        self.show_code = show_code
