"""The ``set_budget`` Update: a person raises (or lowers) a running session's budget.

The validator refuses a change without an author or without anything to change before it
enters history; the handler applies it from the next message on (it is part of the
settings carried across continue-as-new) and writes an audit row like a decision.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from durable_loop.core import names
    from durable_loop.core.activity_refs import AUDIT_SESSION_CHANGE
    from durable_loop.core.budget import (
        BudgetChange,
        BudgetChangeResult,
        SessionChangeAudit,
        budget_change_problem,
        budget_of,
        changed_config,
    )
    from durable_loop.core.config import SessionSettings
    from durable_loop.core.errors import ErrorCode

from durable_loop.workflows.activity_calls import run_activity
from durable_loop.workflows.refusals import refuse
from durable_loop.workflows.session_cursor import SessionCursor

AUDIT_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1), maximum_interval=timedelta(seconds=60)
)


class BudgetHandlers:
    """Mixed into the session workflow beside the proposal handlers."""

    _session_id: str
    _settings: SessionSettings
    _cursor: SessionCursor

    @workflow.update(name=names.UPDATE_SET_BUDGET)
    async def set_budget(self, change: BudgetChange) -> BudgetChangeResult:
        before = self._settings.runtime
        after = changed_config(before, change)
        self._settings = self._settings.model_copy(update={"runtime": after})
        info = workflow.current_update_info()
        audit = SessionChangeAudit(
            session_id=self._session_id,
            workspace_id=self._settings.workspace.workspace_id or self._session_id,
            what="budget",
            changes=change.changes(),
            actor=change.changed_by.strip(),
            comment=change.comment,
            key=info.id if info else str(workflow.uuid4()),
        )
        await run_activity(
            AUDIT_SESSION_CHANGE,
            audit,
            start_to_close_timeout=timedelta(seconds=30),
            retry_policy=AUDIT_RETRY,
            summary=f"budget set by {audit.actor}",
        )
        return BudgetChangeResult(
            previous=budget_of(before),
            budget=budget_of(after),
            used_tokens=self._cursor.usage.total_tokens,
            changed_by=audit.actor,
            changed_at=workflow.now(),
            comment=change.comment,
        )

    @set_budget.validator
    def _validate_budget(self, change: BudgetChange) -> None:
        problem = budget_change_problem(change)
        if problem is not None:
            raise refuse(ErrorCode.INVALID_SETTING, problem)
