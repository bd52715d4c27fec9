"""Settling proposals: the only way facts change after the model proposed them.

``facts_commit`` is an activity, never a tool: the session workflow runs it only in reaction
to a person's confirmation. Both activities are idempotent by proposal id (see
``store/workspace_proposals.py``), so Temporal may retry them freely.

``record_decision`` also settles a call in doubt: the row of an answer to one (keyed
``tool-decision:<workflow id>:<call id>:<result seq>:in-doubt:<reruns>`` by the workflow)
settles that run's attempt marker with no body, in the row's own transaction when the
attempts live in the workspace's database, so a late body loses to the answer; the row
says which settlement won (``settled_by``).
"""

from __future__ import annotations

import re

from pydantic import JsonValue
from sqlalchemy import Connection
from temporalio import activity
from temporalio.exceptions import ApplicationError

from durable_loop.activities.once_calls import marker_key
from durable_loop.activities.tools import idempotency_key
from durable_loop.core.errors import ErrorCode
from durable_loop.core.proposals import (
    FACTS_COMMIT,
    PROPOSAL_CLOSE,
    RECORD_DECISION,
    DecisionAudit,
    DecisionAuditOutput,
    SettleInput,
    SettleOutput,
)
from durable_loop.store.tool_attempts import (
    NO_BODY,
    ToolAttempts,
    settle_in,
    settled_by_in,
    settlement,
)
from durable_loop.store.workspace import WorkspaceStore
from durable_loop.store.workspace_decision_audit import record_decision
from durable_loop.store.workspace_proposals import settle

IN_DOUBT_KEY = re.compile(r"tool-decision:(.+):(\d+):in-doubt:(\d+)")


def doubted_marker(audit: DecisionAudit) -> str | None:
    """The attempt marker of the run whose doubt this row answers; None for other rows."""
    found = IN_DOUBT_KEY.fullmatch(audit.key)
    if audit.target != "tool" or audit.call_id is None or found is None:
        return None
    call, seq, reruns = found.groups()
    workflow_id = call.removesuffix(f":{audit.call_id}")
    if workflow_id == call:
        return None
    return marker_key(idempotency_key(workflow_id, audit.call_id, int(seq)), int(reruns))


class WorkspaceActivities:
    def __init__(self, store: WorkspaceStore, attempts: ToolAttempts | None = None) -> None:
        """``attempts``: the once calls' attempt markers (default: in the workspace's
        database; give the transcript store's when the workspace has its own)."""
        self.store = store
        self.attempts = attempts or ToolAttempts(store.db, store.engine.dialect.name)

    @activity.defn(name=FACTS_COMMIT)
    async def facts_commit(self, inp: SettleInput) -> SettleOutput:
        if inp.verdict != "confirm":
            raise ApplicationError(
                f"facts_commit needs a confirmation, not {inp.verdict!r}",
                type=ErrorCode.INVALID_ARGS,
                non_retryable=True,
            )
        return await settle(self.store, inp)

    @activity.defn(name=PROPOSAL_CLOSE)
    async def proposal_close(self, inp: SettleInput) -> SettleOutput:
        if inp.verdict == "confirm":
            raise ApplicationError(
                "a confirmation commits through facts_commit",
                type=ErrorCode.INVALID_ARGS,
                non_retryable=True,
            )
        return await settle(self.store, inp)

    @activity.defn(name=RECORD_DECISION)
    async def record_decision(self, inp: DecisionAudit) -> DecisionAuditOutput:
        """An audit row of a tool-call decision, or of a refused decision; the row of an
        answer to a call in doubt also settles the call (see the module's docstring)."""
        marker = doubted_marker(inp)
        if marker is None:
            return DecisionAuditOutput(written=await record_decision(self.store, inp))
        call_id = inp.call_id or ""

        def settled(conn: Connection) -> dict[str, JsonValue]:
            settle_in(conn, marker, session_id=inp.session_id, call_id=call_id, by=NO_BODY)
            return {"settled_by": settlement(settled_by_in(conn, marker))}

        if self.attempts.db is self.store.db:
            written = await record_decision(self.store, inp, also=settled)
        else:
            await self.attempts.settle(
                marker, session_id=inp.session_id, call_id=call_id, by=NO_BODY
            )
            by = settlement(await self.attempts.settled_by(marker))
            written = await record_decision(self.store, inp, also=lambda _: {"settled_by": by})
        return DecisionAuditOutput(written=written)
