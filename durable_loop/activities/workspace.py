"""Settling proposals: the only way facts change after the model proposed them.

``facts_commit`` is an activity, never a tool: the session workflow runs it only in reaction
to a person's confirmation. Both activities are idempotent by proposal id (see
``store/workspace_proposals.py``), so Temporal may retry them freely.
"""

from __future__ import annotations

from temporalio import activity
from temporalio.exceptions import ApplicationError

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
from durable_loop.store.workspace import WorkspaceStore
from durable_loop.store.workspace_decision_audit import record_decision
from durable_loop.store.workspace_proposals import settle


class WorkspaceActivities:
    def __init__(self, store: WorkspaceStore) -> None:
        self.store = store

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
        """An audit row of a tool-call decision, or of a refused decision."""
        return DecisionAuditOutput(written=await record_decision(self.store, inp))
