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
