"""What a session recorded, per user message: the tool calls the model made (tool name and
canonical arguments), what each returned, the final answer, tokens and latency.

The same reading serves both sides of a replay: the original session's rows and the
replay session's rows, so a difference in the report is a difference in the sessions.
"""

from __future__ import annotations

import json

from pydantic import BaseModel, Field, JsonValue

from durable_loop.client.session_data.carried import turn_of
from durable_loop.core.canonical_json import canonical_dumps, strict_loads
from durable_loop.core.messages import Message
from durable_loop.core.reply_meta import LlmReplyMeta, OfferedTool
from durable_loop.store.session_copy import RowCopy


class Call(BaseModel):
    name: str
    arguments: str = Field(description="Canonical JSON; the raw text when it is not JSON")
    result: JsonValue = None
    has_result: bool = False


class RecordedMessage(BaseModel):
    text: str
    calls: list[Call] = Field(default_factory=list)
    answer: str | None = None
    tokens: int = 0
    latency_ms: int = 0
    fork_turn: int = Field(
        default=0, description="The last turn before this message (0: none), where it forks"
    )


class RecordedSession(BaseModel):
    session_id: str
    messages: list[RecordedMessage] = Field(default_factory=list)
    tool_names: list[str] = Field(default_factory=list, description="Called or offered")
    tool_schemas: dict[str, OfferedTool] = Field(
        default_factory=dict,
        description="The offered tools' schemas by name, the newest recorded one of each "
        "(none in a session recorded before replies recorded them)",
    )


def canonical_arguments(raw: str) -> str:
    try:
        return canonical_dumps(strict_loads(raw or "{}"))
    except (ValueError, RecursionError):
        return raw


def tool_result(message: Message) -> JsonValue:
    """What the tool returned: the envelope's data, else the content as JSON or text."""
    if message.envelope is not None:
        return message.envelope.data
    try:
        value: JsonValue = json.loads(message.content or "null")
    except ValueError:
        return message.content
    return value


def recorded_session(session_id: str, rows: list[RowCopy]) -> RecordedSession:
    messages: list[RecordedMessage] = []
    names: dict[str, None] = {}
    by_id: dict[str, Call] = {}
    schemas: dict[str, OfferedTool] = {}
    last_turn = 0
    for row in rows:
        message = Message.model_validate(row.message)
        if message.from_person:
            messages.append(RecordedMessage(text=message.content or "", fork_turn=last_turn))
            continue
        last_turn = turn_of(row) or last_turn
        if message.role == "assistant" and "tool_schemas" in row.meta:
            recorded = LlmReplyMeta.model_validate(row.meta).tool_schemas or []
            schemas.update((t.name, t) for t in recorded)
        if not messages:
            continue
        current = messages[-1]
        if message.role == "assistant":
            meta = LlmReplyMeta.model_validate(row.meta)
            current.tokens += meta.usage.input_tokens + meta.usage.output_tokens
            current.latency_ms += meta.latency_ms
            names.update(dict.fromkeys(meta.tools_sent or []))
            for tc in message.tool_calls:
                call = Call(name=tc.name, arguments=canonical_arguments(tc.arguments))
                by_id[tc.id] = call
                current.calls.append(call)
                names[tc.name] = None
            if not message.tool_calls and not message.synthetic:
                current.answer = message.content
        elif message.role == "tool" and message.tool_call_id in by_id:
            call = by_id[message.tool_call_id]
            call.result, call.has_result = tool_result(message), True
    return RecordedSession(
        session_id=session_id, messages=messages, tool_names=list(names), tool_schemas=schemas
    )
