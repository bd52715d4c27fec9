"""``durable-loop trace``: a per-message, per-turn view of a session joined from workflow
history (all runs, across continue-as-new) and the transcript store, with the decisions,
budget changes, model switches, cancels and refusals between the turns."""

from durable_loop.client.trace.builder import build_trace
from durable_loop.client.trace.decode import decode_run
from durable_loop.client.trace.entries import TraceEntry
from durable_loop.client.trace.models import CallRow, DecodedRun, MessageRow, Trace, TurnRow

__all__ = [
    "CallRow",
    "DecodedRun",
    "MessageRow",
    "Trace",
    "TraceEntry",
    "TurnRow",
    "build_trace",
    "decode_run",
]
