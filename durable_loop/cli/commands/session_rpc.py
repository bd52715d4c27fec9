"""What the commands that query or update one running session share: the Temporal client
from flags and environment, and the mapping of refusals and missing sessions to CliError."""

from __future__ import annotations

from typing import TYPE_CHECKING

from durable_loop.cli.codes import CliCode
from durable_loop.core.errors import Code, ErrorCode

if TYPE_CHECKING:
    from temporalio.client import Client


async def temporal_client(temporal: dict[str, object]) -> Client:
    """A client for one short call: the Temporal settings only (not the worker's), no
    namespace round trip (a wrong namespace fails the call itself, mapped to
    NAMESPACE_NOT_FOUND) and no trace interceptor (these commands export no spans)."""
    from durable_loop.client.connect import connect
    from durable_loop.client.settings import TemporalSettings

    settings = TemporalSettings.load(None, **temporal)
    return await connect(settings, check_namespace=False, interceptors=[])


def known_failure(err: Exception, session_id: str, refused: Code) -> Exception:
    """Map refusals (``refused`` when they carry no code) and a missing session to
    CliError(code); anything else passes through unchanged."""
    from temporalio.client import WorkflowUpdateFailedError
    from temporalio.service import RPCError, RPCStatusCode

    from durable_loop.cli.errors import CliError, namespace_missing
    from durable_loop.client.refusals import refusal_of

    if isinstance(err, WorkflowUpdateFailedError):
        refusal = refusal_of(err)
        return CliError(refusal.code or refused, refusal.message)
    if (
        isinstance(err, RPCError)
        and err.status == RPCStatusCode.NOT_FOUND
        and not namespace_missing(err.message)
    ):
        return CliError(ErrorCode.SESSION_NOT_FOUND, f"no running session {session_id!r}")
    return err


def known_error(
    err: Exception, session_id: str, *, refused: Code = CliCode.DECISION_REFUSED
) -> Exception:
    """As :func:`known_failure`, and a decision on something not pending (found so by the
    client before sending) becomes CliError(its code)."""
    from durable_loop.cli.errors import CliError
    from durable_loop.client.proposals import ProposalNotPending
    from durable_loop.client.tool_approvals import ToolCallNotPending

    if isinstance(err, ProposalNotPending | ToolCallNotPending):
        return CliError(err.code, err.message)
    return known_failure(err, session_id, refused)
