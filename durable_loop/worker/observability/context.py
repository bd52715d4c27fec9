"""What a log line or span is about: session id, turn and call id, kept in a context
variable around each activity by the observability interceptor."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from pydantic import BaseModel

from durable_loop.core.activity_contracts import LlmTurnInput, ToolRunInput
from durable_loop.core.proposals import SettleInput


class Subject(BaseModel):
    session_id: str | None = None
    turn: int | None = None
    call_id: str | None = None

    def attributes(self) -> dict[str, str | int]:
        """OpenTelemetry span attributes (absent values are left out)."""
        pairs = {
            "durable_loop.session_id": self.session_id,
            "durable_loop.turn": self.turn,
            "durable_loop.call_id": self.call_id,
        }
        return {k: v for k, v in pairs.items() if v is not None}


CURRENT: ContextVar[Subject | None] = ContextVar("durable_loop_subject", default=None)


def subject_of(arg: object) -> Subject | None:
    """The subject of an activity input we know, else None."""
    if isinstance(arg, LlmTurnInput):
        return Subject(session_id=arg.transcript.session_id, turn=arg.turn)
    if isinstance(arg, ToolRunInput):
        return Subject(session_id=arg.session_id, turn=arg.turn, call_id=arg.call_id)
    if isinstance(arg, SettleInput):
        return Subject(session_id=arg.session_id)
    session_id = getattr(arg, "session_id", None)
    return Subject(session_id=session_id) if isinstance(session_id, str) else None


@contextmanager
def about(subject: Subject | None) -> Iterator[None]:
    token = CURRENT.set(subject)
    try:
        yield
    finally:
        CURRENT.reset(token)
