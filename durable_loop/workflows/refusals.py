"""How the session workflow refuses: an Update validator (or handler) raises
:func:`refuse`, an ``ApplicationError`` whose ``type`` is the code. Clients read the code
from the failure's type (``durable_loop.client.refusals``); the message leads with it as
well, for people reading it.

A rejected Update never enters history, so what a validator raises does not affect replay.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from durable_loop.core.errors import ErrorCode, coded_text


def refuse(code: ErrorCode, message: str) -> ApplicationError:
    """The non-retryable failure that refuses an Update with ``code``."""
    return ApplicationError(coded_text(code, message), type=code, non_retryable=True)


def refusal_scope() -> str:
    """What makes a refusal's audit key unique across sessions: ``workflow.uuid4()`` is
    seeded per run, and a server may hand every run the same seed (the time-skipping
    test server does), so the uuid alone collides across sessions sharing one store."""
    info = workflow.info()
    return f"{info.workflow_id}:{info.run_id}"
