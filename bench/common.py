"""What both loops of a benchmark share: the ~2 KB tool, the scripted conversation and the
measurement of real workflow histories."""

from __future__ import annotations

import threading

from pydantic import BaseModel, Field
from temporalio.api.enums.v1 import EventType, WorkflowTaskFailedCause
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client, WorkflowHistory

from durable_loop.client.history import fetch_histories
from durable_loop.core.registry import ToolRegistry
from durable_loop.testing import RecordedRequest, Reply, reply

TOOL_NAME = "read_page"
PAGE_BYTES = 2048
TURN_DEFINITION = (
    "a turn = one user message answered by one tool turn: the LLM requests one tool call, "
    f"the tool returns ~{PAGE_BYTES} bytes, the LLM answers with short text. A session of N "
    "turns = N user messages sent one after another (Temporal Update), so both loops make "
    "the same 2N LLM calls and N tool calls against the same scripted endpoint."
)
FILLER = "The quick brown fox jumps over the lazy dog while the durable loop keeps going. "


def page_text(page: int) -> str:
    head = f"page {page}: "
    body = (FILLER * (PAGE_BYTES // len(FILLER) + 1))[: PAGE_BYTES - len(head)]
    return head + body


def page_tools() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool(name=TOOL_NAME)
    def read_page(page: int) -> str:
        """Read one page of a long document (about 2 KB of text)."""
        return page_text(page)

    return registry


class ConversationScript:
    """A scripted model driven by the conversation it is sent, not by a fixed queue.

    After a user message it calls the tool once; after a tool result it answers in text.
    It records, per model, how many messages the last request carried: the proof that a
    session kept its whole conversation across continue-as-new.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.last_message_count: dict[str, int] = {}
        self.requests: dict[str, int] = {}

    def __call__(self, request: RecordedRequest) -> Reply:
        messages = request.messages
        turn = sum(1 for m in messages if m.get("role") == "user")
        with self._lock:
            self.last_message_count[request.model] = len(messages)
            self.requests[request.model] = self.requests.get(request.model, 0) + 1
        if messages and messages[-1].get("role") == "tool":
            return reply.text(f"Page {turn} is read.")
        return reply.tool_call(TOOL_NAME, {"page": turn}, call_id=f"call_{turn}")


def expected_last_request_messages(turns: int) -> int:
    """Each finished turn leaves 4 messages; the last request lacks only its own reply."""
    return 4 * turns - 1 if turns else 0


# ---------------------------------------------------------------- measuring histories


class HistoryStats(BaseModel):
    runs: int
    events: int
    events_per_run: list[int]
    bytes: int = Field(description="Sum of serialized event sizes over every run")
    turn_bytes: list[int] = Field(
        description="Bytes of the events from one update acceptance to the next, per turn"
    )
    run_overhead_bytes: int = Field(
        description="Events of each run before its first turn (start, tool catalog)"
    )
    bytes_by_kind: dict[str, int] = Field(
        description="Bytes per event type; activity events also carry the activity name"
    )


def event_bytes(event: HistoryEvent) -> int:
    return len(event.SerializeToString())


def event_kind(event: HistoryEvent, activity_names: dict[int, str]) -> str:
    kind = EventType.Name(event.event_type).removeprefix("EVENT_TYPE_")
    if event.HasField("activity_task_scheduled_event_attributes"):
        name = event.activity_task_scheduled_event_attributes.activity_type.name
        activity_names[event.event_id] = name
        return f"{kind}:{name}"
    for attrs in (
        "activity_task_started_event_attributes",
        "activity_task_completed_event_attributes",
        "activity_task_failed_event_attributes",
    ):
        if event.HasField(attrs):
            scheduled = getattr(event, attrs).scheduled_event_id
            return f"{kind}:{activity_names.get(scheduled, '?')}"
    return kind


def measure(histories: list[WorkflowHistory]) -> HistoryStats:
    total = events = overhead = 0
    turn_bytes: list[int] = []
    by_kind: dict[str, int] = {}
    for history in histories:
        in_turn = False
        activity_names: dict[int, str] = {}
        for event in history.events:
            size = event_bytes(event)
            total += size
            events += 1
            kind = event_kind(event, activity_names)
            by_kind[kind] = by_kind.get(kind, 0) + size
            if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
                turn_bytes.append(0)
                in_turn = True
            if in_turn:
                turn_bytes[-1] += size
            else:
                overhead += size
    return HistoryStats(
        runs=len(histories),
        events=events,
        events_per_run=[len(h.events) for h in histories],
        bytes=total,
        turn_bytes=turn_bytes,
        run_overhead_bytes=overhead,
        bytes_by_kind=dict(sorted(by_kind.items(), key=lambda item: -item[1])),
    )


async def fetch_and_measure(client: Client, workflow_id: str) -> HistoryStats:
    return measure(await fetch_histories(client, workflow_id))


def failure_reason(histories: list[WorkflowHistory]) -> str | None:
    """Why the latest run stopped or stalls: its close event, else its last task failure."""
    if not histories:
        return None
    events = list(histories[-1].events)
    for event in reversed(events):
        kind = event.event_type
        if kind == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED:
            return f"terminated: {event.workflow_execution_terminated_event_attributes.reason}"
        if kind == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED:
            failure = event.workflow_execution_failed_event_attributes.failure
            return f"failed: {failure.message}"
        if kind == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED:
            attrs = event.workflow_task_failed_event_attributes
            cause = WorkflowTaskFailedCause.Name(attrs.cause)
            return f"workflow task failed (cause {cause}): {attrs.failure.message}"
    return None
