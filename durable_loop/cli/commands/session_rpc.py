"""What the commands that query or update one running session share: the Temporal client
from flags and environment, and the mapping of refusals and missing sessions to CliError."""

from __future__ import annotations

from typing import TYPE_CHECKING

from durable_loop.core.errors import ErrorCode

if TYPE_CHECKING:
    from temporalio.client import Client


async def temporal_client(temporal: dict[str, object]) -> Client:
    from durable_loop.client.connect import connect
    from durable_loop.worker.settings import WorkerSettings

    return await connect(WorkerSettings.load(temporal=temporal).temporal)


def known_failure(err: Exception, session_id: str, refused: ErrorCode) -> Exception:
    """Map refusals (``refused`` when they carry no code) and a missing session to
    CliError(code); anything else passes through unchanged."""
    from temporalio.client import WorkflowUpdateFailedError
    from temporalio.service import RPCError, RPCStatusCode

    from durable_loop.cli.errors import CliError
    from durable_loop.client.refusals import refusal_of

    if isinstance(err, WorkflowUpdateFailedError):
        refusal = refusal_of(err)
        return CliError(refusal.code or refused, refusal.message)
    if isinstance(err, RPCError) and err.status == RPCStatusCode.NOT_FOUND:
        return CliError(ErrorCode.SESSION_NOT_FOUND, f"no running session {session_id!r}")
    return err
