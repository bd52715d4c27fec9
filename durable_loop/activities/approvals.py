"""Held tool calls: read a call's arguments from the store, and audit a decision on it."""

from __future__ import annotations

from pydantic import JsonValue
from temporalio import activity

from durable_loop.core.approvals import (
    READ_TOOL_CALLS,
    RECORD_TOOL_DECISION,
    ReadToolCallsInput,
    ReadToolCallsOutput,
    ToolCallArguments,
    ToolDecisionAudit,
    ToolDecisionAuditOutput,
    tool_call_fingerprint,
)
from durable_loop.core.canonical_json import strict_loads
from durable_loop.store import TranscriptStore
from durable_loop.store.workspace import WorkspaceStore
from durable_loop.store.workspace_tool_audit import record_tool_decision


class ApprovalActivities:
    def __init__(self, store: TranscriptStore, workspace: WorkspaceStore) -> None:
        self.store = store
        self.workspace = workspace

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

    @activity.defn(name=RECORD_TOOL_DECISION)
    async def record_tool_decision(self, inp: ToolDecisionAudit) -> ToolDecisionAuditOutput:
        return ToolDecisionAuditOutput(written=await record_tool_decision(self.workspace, inp))


def _parsed(raw: str) -> dict[str, JsonValue] | None:
    try:
        value = strict_loads(raw) if raw.strip() else {}
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None
