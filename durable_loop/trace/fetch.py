"""The I/O half of the trace: fetch every run's history and the stored transcript."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from sqlalchemy.engine import make_url
from temporalio.client import Client, WorkflowHistory

from durable_loop.activities.store import StoredMessage, TranscriptStore
from durable_loop.activities.store.engine import async_engine
from durable_loop.toolcalling import names
from durable_loop.trace.builder import build_trace
from durable_loop.trace.decode import decode_run
from durable_loop.trace.models import Trace


class StoreMissing(FileNotFoundError):
    pass


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


async def fetch_messages(db_url: str, session_id: str) -> list[StoredMessage]:
    """Read the transcript without creating or migrating anything."""
    url = make_url(db_url)
    database = url.database or ""
    local = url.get_backend_name() == "sqlite" and database not in ("", ":memory:")
    if local and not Path(database).exists():
        raise StoreMissing(database)
    store = TranscriptStore(async_engine(db_url))
    try:
        return await store.read(session_id)
    finally:
        await store.close()


async def load_trace(
    client: Client,
    session_id: str,
    *,
    db_url: str | None,
    ui_url: str | None = None,
) -> Trace:
    workflow_id = names.session_workflow_id(session_id)
    histories = await fetch_histories(client, workflow_id)
    runs = [decode_run(h.events, h.run_id, i) for i, h in enumerate(histories)]
    stored = await fetch_messages(db_url, session_id) if db_url else []
    return build_trace(
        session_id,
        workflow_id,
        runs,
        stored,
        namespace=client.namespace,
        ui_url=ui_url,
    )
