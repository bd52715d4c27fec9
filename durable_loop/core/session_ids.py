"""The one rule for a session id: what ``SessionClient`` starts is what the HTTP API
addresses in ``/v1/sessions/{session_id}/...`` and accepts in a body, and what the CLI
starts. An id is a path segment of the API, so it holds no ``/`` and is not ``.`` or
``..``; it is shown to people, so it holds no space, control or bidi character."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator

from durable_loop.core.errors import DurableLoopError, ErrorCode

SESSION_ID_MAX_CHARS = 200
SESSION_ID_RULE = (
    f"1 to {SESSION_ID_MAX_CHARS} printable characters without spaces or '/', and not '.' or '..'"
)


class InvalidSessionId(DurableLoopError, ValueError):
    """A session id outside the rule (``INVALID_SESSION_ID``)."""

    def __init__(self, session_id: str) -> None:
        shown = session_id[:40].encode("unicode_escape").decode("ascii")
        super().__init__(
            ErrorCode.INVALID_SESSION_ID, f"session id {shown!r}: expected {SESSION_ID_RULE}"
        )


def is_session_id(session_id: str) -> bool:
    return (
        0 < len(session_id) <= SESSION_ID_MAX_CHARS
        and session_id.isprintable()
        and not any(c.isspace() or c == "/" for c in session_id)
        and session_id not in (".", "..")
    )


def check_session_id(session_id: str) -> str:
    """``session_id`` itself, or :class:`InvalidSessionId`."""
    if not is_session_id(session_id):
        raise InvalidSessionId(session_id)
    return session_id


SessionIdText = Annotated[str, AfterValidator(check_session_id)]
"""A validated session id in a Pydantic model or a FastAPI parameter."""
