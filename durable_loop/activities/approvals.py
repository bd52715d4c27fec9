"""Held tool calls: read a call's arguments from the store (once, when it is held)."""

from __future__ import annotations

from pydantic import JsonValue
from temporalio import activity

from durable_loop.core.approvals import (
    READ_TOOL_CALLS,
    ReadToolCallsInput,
    ReadToolCallsOutput,
    ToolCallArguments,
    tool_call_fingerprint,
)
from durable_loop.core.canonical_json import strict_loads
from durable_loop.store import TranscriptStore


class ApprovalActivities:
    def __init__(self, store: TranscriptStore) -> None:
        self.store = store

    @activity.defn(name=READ_TOOL_CALLS)
    async def read_tool_calls(self, inp: ReadToolCallsInput) -> ReadToolCallsOutput:
        stored = await self.store.get(inp.session_id, inp.assistant_seq)
        calls = stored.message.tool_calls if stored else []
        out: list[ToolCallArguments] = []
        for index in inp.call_indexes:
            arguments = _parsed(calls[index].arguments) if index < len(calls) else None
            fingerprint = (
                tool_call_fingerprint(calls[index].name, arguments) if arguments is not None else ""
            )
            out.append(
                ToolCallArguments(call_index=index, arguments=arguments, fingerprint=fingerprint)
            )
        return ReadToolCallsOutput(calls=out)


def _parsed(raw: str) -> dict[str, JsonValue] | None:
    try:
        value = strict_loads(raw) if raw.strip() else {}
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None
