"""A decision over HTTP that names no fingerprint: refused (428 ``FINGERPRINT_REQUIRED``)
unless the service trusts its callers, and audited like every refused decision.

The refusal happens in the service, before the workflow sees anything, so the service
writes its audit row itself, in the workspace audit log the workflow writes to (a service
started without ``--db-url`` has no store and cannot).
"""

from __future__ import annotations

import uuid
from typing import Literal

from durable_loop.core.errors import ErrorCode
from durable_loop.core.proposals import DecisionAudit
from durable_loop.service.deps import ServiceDeps
from durable_loop.service.errors import ApiError
from durable_loop.store.workspace_decision_audit import record_decision


async def require_fingerprint(
    fingerprint: str | None,
    deps: ServiceDeps,
    *,
    session_id: str,
    approver: str,
    target: Literal["tool", "proposal"],
    decided_on: str,
    comment: str | None,
) -> None:
    """Refuse (and audit) a decision without ``fingerprint``, unless unbound ones are allowed."""
    if fingerprint is not None or deps.limits.allow_unbound_decisions:
        return
    what, listing = ("tool call", "tool-calls") if target == "tool" else ("proposal", "proposals")
    error = ApiError(
        428,
        ErrorCode.FINGERPRINT_REQUIRED,
        f"send the fingerprint of the {what} the approver saw (GET .../{listing})",
    )
    if deps.workspace is not None:
        workspace_id = await deps.sessions.workspace_id(session_id)
        await record_decision(
            deps.workspace,
            DecisionAudit(
                workspace_id=workspace_id,
                session_id=session_id,
                target=target,
                op="refused",
                actor=approver,
                call_id=decided_on if target == "tool" else None,
                proposal_id=decided_on if target == "proposal" else None,
                comment=comment,
                value={"code": error.code, "message": error.message, "channel": "http"},
                key=f"http-refused:{uuid.uuid4()}",
            ),
        )
    raise error
