"""``durable-loop trace``: a per-turn view of a session joined from workflow history (all
runs, across continue-as-new) and the transcript store."""

from durable_loop.client.trace.builder import build_trace
from durable_loop.client.trace.decode import decode_run
from durable_loop.client.trace.models import CallRow, DecodedRun, Trace, TurnRow

__all__ = ["CallRow", "DecodedRun", "Trace", "TurnRow", "build_trace", "decode_run"]
