"""The command line's own codes: failures only the CLI (and the processes it starts) meets.

Members of :class:`~durable_loop.core.errors.Code`, like the runtime's
:class:`~durable_loop.core.errors.ErrorCode`, and as stable: they are printed on error
lines that scripts read. ``UNKNOWN_SCENARIO`` is here because both ``durable-loop eval``
and ``durable-loop chaos`` take scenario names and neither layer may import the other.
``docs/architecture.md`` (Errors, "Command line") lists them.
"""

from __future__ import annotations

from durable_loop.core.errors import Code


class CliCode(Code):
    # files named on the command line
    FILE_NOT_FOUND = "FILE_NOT_FOUND"
    PERMISSION_DENIED = "PERMISSION_DENIED"
    # Temporal, as the CLI meets it
    TEMPORAL_AUTH = "TEMPORAL_AUTH"
    NAMESPACE_NOT_FOUND = "NAMESPACE_NOT_FOUND"
    # commands on sessions
    NO_SESSION = "NO_SESSION"
    NO_REPLY = "NO_REPLY"
    NOT_PENDING = "NOT_PENDING"
    # worker deployments (Worker Versioning)
    NO_DEPLOYMENT = "NO_DEPLOYMENT"
    DECISION_REFUSED = "DECISION_REFUSED"
    # servers the CLI starts
    NO_API_TOKENS = "NO_API_TOKENS"
    NO_CODEC_TOKENS = "NO_CODEC_TOKENS"
    PORT_IN_USE = "PORT_IN_USE"
    MISSING_BINARY = "MISSING_BINARY"
    DEV_SERVER_ERROR = "DEV_SERVER_ERROR"
    DEV_SERVER_EXITED = "DEV_SERVER_EXITED"
    # the local model
    MODEL_UNKNOWN = "MODEL_UNKNOWN"
    MODEL_MISSING = "MODEL_MISSING"
    MODEL_FETCH_FAILED = "MODEL_FETCH_FAILED"
    MODEL_PART_INVALID = "MODEL_PART_INVALID"
    MODEL_CHECKSUM_MISMATCH = "MODEL_CHECKSUM_MISMATCH"
    GGUF_INVALID = "GGUF_INVALID"
    LOCAL_LLM_NOT_READY = "LOCAL_LLM_NOT_READY"
    # scenario names of `durable-loop eval` and `durable-loop chaos`
    UNKNOWN_SCENARIO = "UNKNOWN_SCENARIO"
