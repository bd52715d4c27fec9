"""The I/O half of the trace: fetch every run's history and the stored transcript."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sqlalchemy.engine import make_url
from temporalio.api.common.v1 import Payloads
from temporalio.api.enums.v1 import EventType
from temporalio.api.failure.v1 import Failure
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client
from temporalio.converter import DataConverter, PayloadCodec

from durable_loop.client.history import fetch_histories
from durable_loop.client.trace.arguments import ARGS_CHARS
from durable_loop.client.trace.builder import build_trace
from durable_loop.client.trace.decode import decode_run
from durable_loop.client.trace.models import Trace
from durable_loop.client.trace.replies import REPLY_CHARS
from durable_loop.client.trace.tool_names import catalog_load_result
from durable_loop.core import names
from durable_loop.core.errors import DurableLoopError, ErrorCode
from durable_loop.core.messages import StoredMessage
from durable_loop.store import TranscriptStore
from durable_loop.store.engine import async_engine


class StoreMissing(DurableLoopError, FileNotFoundError):
    """No transcript store at ``path`` (a local SQLite file); the message is the path."""

    def __init__(self, path: str) -> None:
        super().__init__(ErrorCode.STORE_NOT_FOUND, path)
        self.path = path


def require_store(db_url: str) -> None:
    """Raise StoreMissing for a local SQLite file that is not there (reading would create
    an empty one)."""
    url = make_url(db_url)
    database = url.database or ""
    local = url.get_backend_name() == "sqlite" and database not in ("", ":memory:")
    if local and not Path(database).exists():
        raise StoreMissing(database)


async def fetch_messages(db_url: str, session_id: str) -> list[StoredMessage]:
    """Read the transcript without creating or migrating anything."""
    require_store(db_url)
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
    args_chars: int | None = ARGS_CHARS,
    reply_chars: int | None = REPLY_CHARS,
) -> Trace:
    """``args_chars`` / ``reply_chars``: characters of each call's arguments (from the
    store) and of each reply to show; None shows them whole."""
    workflow_id = names.session_workflow_id(session_id)
    histories = await fetch_histories(client, workflow_id)
    for history in histories:
        await decode_payloads(history.events, client.data_converter)
    runs = [decode_run(h.events, h.run_id, i) for i, h in enumerate(histories)]
    stored = await fetch_messages(db_url, session_id) if db_url else None
    return build_trace(
        session_id,
        workflow_id,
        runs,
        stored,
        namespace=client.namespace,
        ui_url=ui_url,
        args_chars=args_chars,
        reply_chars=reply_chars,
    )


async def decode_payloads(events: Sequence[HistoryEvent], converter: DataConverter) -> None:
    """Run the client's payload codec (e.g. decryption) over the payloads the trace reads,
    in place, so an encrypted session traces like a plain one for whoever holds its keys."""
    codec = converter.payload_codec
    if codec is None:
        return
    for event in events:
        for payloads in _payloads_read(event):
            await _decode(codec, payloads)
        for failure in _failures_read(event):
            await _decode_failure(converter, failure)


def _payloads_read(event: HistoryEvent) -> list[Payloads]:
    """The payloads of ``event`` the trace decodes."""
    kind = event.event_type
    if kind == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
        return [event.activity_task_scheduled_event_attributes.input]
    if kind == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
        return [event.activity_task_completed_event_attributes.result]
    if kind == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ADMITTED:
        return [event.workflow_execution_update_admitted_event_attributes.request.input.args]
    if kind == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
        accepted = event.workflow_execution_update_accepted_event_attributes
        return [accepted.accepted_request.input.args]
    if kind == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED:
        outcome = event.workflow_execution_update_completed_event_attributes.outcome
        return [outcome.success] if outcome.HasField("success") else []
    if kind == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_REJECTED:
        rejected = event.workflow_execution_update_rejected_event_attributes
        return [rejected.rejected_request.input.args]
    if kind == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
        return [event.workflow_execution_signaled_event_attributes.input]
    if kind == EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED:
        return [event.child_workflow_execution_completed_event_attributes.result]
    if kind == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:
        return [event.workflow_execution_completed_event_attributes.result]
    if kind == EventType.EVENT_TYPE_MARKER_RECORDED:
        loaded = catalog_load_result(event)
        return [loaded] if loaded is not None else []
    return []


def _failures_read(event: HistoryEvent) -> list[Failure]:
    """The failures of ``event`` whose message or code the trace shows."""
    kind = event.event_type
    if kind == EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED:
        return [event.activity_task_failed_event_attributes.failure]
    if kind == EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
        return [event.activity_task_timed_out_event_attributes.failure]
    if kind == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED:
        outcome = event.workflow_execution_update_completed_event_attributes.outcome
        return [outcome.failure] if outcome.HasField("failure") else []
    if kind == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_REJECTED:
        return [event.workflow_execution_update_rejected_event_attributes.failure]
    if kind == EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_FAILED:
        return [event.child_workflow_execution_failed_event_attributes.failure]
    return []


async def _decode(codec: PayloadCodec, payloads: Payloads) -> None:
    if not payloads.payloads:
        return
    decoded = await codec.decode(list(payloads.payloads))
    del payloads.payloads[:]
    payloads.payloads.extend(decoded)


async def _decode_failure(converter: DataConverter, failure: Failure) -> None:
    """Decode the failure and put its encoded message back where the trace reads it."""
    assert converter.payload_codec is not None
    await converter.payload_codec.decode_failure(failure)
    if failure.HasField("encoded_attributes"):
        attrs = converter.payload_converter.from_payloads([failure.encoded_attributes])[0]
        if isinstance(attrs, dict) and isinstance(attrs.get("message"), str):
            failure.message = attrs["message"]
