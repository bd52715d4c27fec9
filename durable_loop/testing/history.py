"""Workflow histories for tests: replay them, look into them.

Every history a test produces must replay with :class:`temporalio.worker.Replayer` against
the current workflow code; :func:`replay_failures` reports the runs that do not. Fetching
every run of a session is the client's
(:func:`durable_loop.client.history.fetch_histories`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Sequence

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import History, HistoryEvent
from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter
from temporalio.worker import Replayer
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from durable_loop.workflows.registered import WORKFLOWS

RESTRICTIONS = SandboxRestrictions.default.with_passthrough_modules("durable_loop.core.recoveries")


async def replay_failures(
    histories: Iterable[WorkflowHistory],
    workflows: Sequence[type] = WORKFLOWS,
    *,
    data_converter: DataConverter = pydantic_data_converter,
) -> dict[str, str]:
    """Replay ``histories`` against the current workflow code; map run id -> failure.
    Encrypted histories need the ``data_converter`` (with its codec) that wrote them.

    Deliberately under the SDK's default sandbox, not the worker plugin's: here every
    module of ``durable_loop.workflows`` is imported and restricted per run, the check that
    the workers' passthrough (:mod:`durable_loop.worker.sandbox`) relies on. Only the
    recoveries registry is passed through: an application registers its own recoveries
    once per process (core/recoveries/registry)."""
    listed = list(histories)
    if not listed:
        return {}

    async def produce() -> AsyncIterator[WorkflowHistory]:
        for history in listed:
            yield history

    replayer = Replayer(
        workflows=list(workflows),
        data_converter=data_converter,
        workflow_runner=SandboxedWorkflowRunner(restrictions=RESTRICTIONS),
    )
    results = await replayer.replay_workflows(produce(), raise_on_replay_failure=False)
    return {
        run_id: f"{type(err).__name__}: {err}" for run_id, err in results.replay_failures.items()
    }


def events_of(history: WorkflowHistory, event_type: int) -> list[HistoryEvent]:
    """The events of one ``EventType`` (e.g. ``EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED``)."""
    return [e for e in history.events if e.event_type == event_type]


def history_bytes(history: WorkflowHistory) -> bytes:
    """The history as protobuf bytes: every string and payload appears in it verbatim, so a
    byte search finds a secret however it was encoded (JSON payloads, failure messages)."""
    return History(events=history.events).SerializeToString()


__all__ = ["EventType", "events_of", "history_bytes", "replay_failures"]
