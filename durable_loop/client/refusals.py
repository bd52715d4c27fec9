"""Reading an Update the session workflow refused: the code is the failure's ``type``
(``durable_loop.workflows.refusals.refuse``), never parsed out of its text."""

from __future__ import annotations

from dataclasses import dataclass

from temporalio.client import WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from durable_loop.core.errors import ErrorCode, coded_text


@dataclass(frozen=True)
class Refusal:
    code: ErrorCode | None
    """``None`` when the failure carries no code of ours (a bug, a payload the workflow
    could not read, a worker that predates coded refusals)."""
    message: str
    """What to tell a person, without the code the text leads with."""
    text: str
    """The failure's text as the workflow wrote it."""


def refusal_of(err: WorkflowUpdateFailedError) -> Refusal:
    cause = err.cause
    text = str(getattr(cause, "message", None) or cause or err)
    code = ErrorCode.known(cause.type) if isinstance(cause, ApplicationError) else None
    message = text.removeprefix(coded_text(code, "")) if code is not None else text
    return Refusal(code=code, message=message, text=text)
