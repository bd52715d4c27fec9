"""Fetching a session's workflow history: every run, across continue-as-new."""

from __future__ import annotations

from datetime import timedelta

from temporalio.client import Client, WorkflowHistory


async def fetch_histories(client: Client, workflow_id: str) -> list[WorkflowHistory]:
    """Every run of ``workflow_id``, oldest first, following the continue-as-new chain
    backwards from the latest run."""
    runs: list[WorkflowHistory] = []
    run_id: str | None = None
    while True:
        handle = client.get_workflow_handle(workflow_id, run_id=run_id)
        history = await handle.fetch_history(rpc_timeout=timedelta(seconds=30))
        if not history.events:
            break
        runs.append(history)
        started = history.events[0].workflow_execution_started_event_attributes
        run_id = started.continued_execution_run_id or None
        if run_id is None:
            break
    runs.reverse()
    return runs
