"""Changing a running session's budget from outside the workflow (the ``set_budget`` Update)."""

from __future__ import annotations

from temporalio.client import Client, WorkflowHandle

from durable_loop.core import names
from durable_loop.core.budget import BudgetChange, BudgetChangeResult


class BudgetClient:
    def __init__(self, client: Client) -> None:
        self.client = client

    def handle(self, session_id: str) -> WorkflowHandle:
        return self.client.get_workflow_handle(names.session_workflow_id(session_id))

    async def set_budget(self, session_id: str, change: BudgetChange) -> BudgetChangeResult:
        """Change the running session's budget from its next message on, recorded in the
        audit log with ``change.changed_by``; a change without an author or without
        anything to change is refused (``INVALID_SETTING``) before it enters history."""
        return await self.handle(session_id).execute_update(
            names.UPDATE_SET_BUDGET, change, result_type=BudgetChangeResult
        )
