"""Writing the messages the workflow decided on (user text, refusals, reused results)."""

from __future__ import annotations

from temporalio import activity

from durable_loop.core import names
from durable_loop.core.activity_contracts import AppendItem, WriteMessagesInput, WriteMessagesOutput
from durable_loop.core.envelope import Envelope
from durable_loop.core.errors import ErrorCode
from durable_loop.core.messages import Message
from durable_loop.core.reply_meta import ReusedResultMeta, RowMeta
from durable_loop.store import TranscriptStore

REUSED_WARNING = (
    "identical to a call already made in an earlier turn; this is its recorded result "
    "(the tool did not run again). Do not call the tool again: answer the user now."
)
REUSED_FAILURE_WARNING = (
    "identical to a call that already failed in an earlier turn; this is its recorded error "
    "(the tool did not run again). Repeating it cannot succeed: change the arguments as the "
    "error says."
)
DEDUPLICATED_WARNING = (
    "this exact call was already made earlier in this session; this is its recorded result "
    "(the tool did not run again)."
)
"""The repeated-call guard (``REUSED_*``) sees calls of earlier turns of the same message;
the session-wide dedup (``DEDUPLICATED_*``) those of any earlier message. Neither looks
within one reply: identical calls of one reply all run."""


async def write_appends(store: TranscriptStore, session_id: str, appends: list[AppendItem]) -> None:
    rows: list[tuple[int, Message, RowMeta]] = []
    for item in appends:
        if item.message is not None:
            rows.append((item.seq, item.message, RowMeta()))
            continue
        if item.copy_result_from is None:
            continue
        source = await store.get(session_id, item.copy_result_from)
        envelope = (
            source.message.envelope
            if source and source.message.envelope
            else Envelope.failure(ErrorCode.TOOL_ERROR, "the earlier result is not available")
        )
        if item.dedupe:
            warning = DEDUPLICATED_WARNING
        else:
            warning = REUSED_WARNING if envelope.ok else REUSED_FAILURE_WARNING
        reused = envelope.model_copy(
            update={
                "warnings": [*envelope.warnings, warning],
                "reused": True,
                "deduplicated": item.dedupe,
            }
        )
        message = Message.tool_result(item.tool_call_id or "", item.tool_name or "", reused)
        meta = ReusedResultMeta(
            reused_from=item.copy_result_from, deduplicated=True if item.dedupe else None
        )
        rows.append((item.seq, message, meta))
    await store.append(session_id, rows)


class TranscriptActivities:
    def __init__(self, store: TranscriptStore) -> None:
        self.store = store

    @activity.defn(name=names.WRITE_MESSAGES)
    async def write_messages(self, inp: WriteMessagesInput) -> WriteMessagesOutput:
        await write_appends(self.store, inp.session_id, inp.appends)
        return WriteMessagesOutput(written=len(inp.appends))
