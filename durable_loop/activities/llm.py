"""The LLM activity: build one request from the stored transcript, call the provider, store
the reply, and return only a summary to the workflow.

The provider client's own retries are off; Temporal owns retries. Errors are classified:
408/409/429/5xx and timeouts retry (honouring Retry-After), other 4xx and unreadable
responses fail fast.

One turn, top to bottom: the request is built (``core.request.plan_turn``: tools, the
outbound transforms' stage before the plan, context window, prompt plan); the gateway
encodes it (the outbound wire stage), sends it and reads the reply (the inbound
transforms: ``core.transforms.pipeline``); a typed answer is taken from its final-answer
call; the reply is stored with its meta and summarised for the workflow.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from pydantic import JsonValue
from temporalio import activity

from durable_loop.activities.appends import write_appends
from durable_loop.activities.gateway import GatewayReply, LlmGateway
from durable_loop.activities.heartbeat import heartbeating
from durable_loop.activities.llm_stream import ChunkWriter
from durable_loop.activities.turn_history import turn_history
from durable_loop.core import names
from durable_loop.core.activity_contracts import LlmTurnInput, LlmTurnOutput, ToolCallSummary
from durable_loop.core.canonical_json import (
    arguments_fingerprint,
    largest_string,
    strict_loads,
    utf8_len,
)
from durable_loop.core.context_window import ContextReport
from durable_loop.core.messages import Message, StoredMessage
from durable_loop.core.providers.base import tool_result_text
from durable_loop.core.registry import ToolRegistry
from durable_loop.core.reply_meta import LlmReplyMeta, offered_tools
from durable_loop.core.request import TurnPlan, plan_turn
from durable_loop.core.request_left import CallMade, request_left
from durable_loop.core.said_values import Heard, unsaid_arguments
from durable_loop.core.transforms.text_calls import text_call_warning
from durable_loop.core.typed_output import final_answer_from_call
from durable_loop.store import TranscriptStore
from durable_loop.store.stream import StreamStore

CANCELLED_FINISH = "cancelled"
"""The finish reason of a streamed reply cut off by a cancel."""
LARGE_ARGS_BYTES = 256
"""Above this size a call summary says where its longest string is (for ARGUMENTS_TOO_LARGE)."""


class LlmActivities:
    def __init__(
        self,
        store: TranscriptStore,
        gateway: LlmGateway,
        registry: ToolRegistry,
        streams: StreamStore | None = None,
    ) -> None:
        self.store = store
        self.gateway = gateway
        self.registry = registry
        self.streams = streams or StreamStore(store.db)

    @activity.defn(name=names.LLM_TURN)
    async def llm_turn(self, inp: LlmTurnInput) -> LlmTurnOutput:
        # Beat from the start: the heartbeat timeout also runs before the first beat.
        async with heartbeating(f"llm turn {inp.turn}"):
            return await self._llm_turn(inp)

    async def _llm_turn(self, inp: LlmTurnInput) -> LlmTurnOutput:
        await write_appends(self.store, inp.transcript.session_id, inp.appends)
        history = await turn_history(self.store, inp)
        unsaid = self._unsaid(inp, history.messages)
        if history.reply is not None:
            out = summarize_reply(history.reply, inp, cached=True, unsaid=unsaid)
            return with_request_left(out, history.messages, history.reply.message, inp)
        turn = plan_turn(self.registry, inp, history)
        done = await self._complete(inp, turn)
        message = done.reply.message
        if inp.output_schema is not None:
            message = final_answer_from_call(message, inp.output_schema)
        meta = reply_meta(inp, turn, done, text_call_note(inp, turn, message))
        digest, schemas = offered_tools(turn.plan.tools, history.messages)
        meta = meta.model_copy(update={"tools_digest": digest, "tool_schemas": schemas})
        written = await self.store.put(inp.transcript.session_id, inp.assistant_seq, message, meta)
        out = summarize_reply(written, inp, cached=False, unsaid=unsaid)
        return with_request_left(out, history.messages, written.message, inp)

    def _unsaid(
        self, inp: LlmTurnInput, messages: list[StoredMessage]
    ) -> Callable[[str, dict[str, JsonValue]], list[str]]:
        """The ``args_unsaid`` of a call; the conversation is indexed only when a reply
        holds a call of a registered tool, so a text reply pays nothing."""
        heard: list[Heard] = []

        def unsaid(name: str, args: dict[str, JsonValue]) -> list[str]:
            tool = self.registry.get(name)
            if tool is None:
                return []
            if not heard:
                heard.append(heard_in(inp, messages))
            return unsaid_arguments(
                args, tool.spec.parameters, heard[0], tool=name, offered=inp.tool_names
            )

        return unsaid

    async def _complete(self, inp: LlmTurnInput, turn: TurnPlan) -> GatewayReply:
        """The gateway's exchange (outbound wire transforms, HTTP, inbound transforms),
        streamed when asked; a cancelled stream keeps its text so far."""
        stream = (
            ChunkWriter(
                self.streams, inp.transcript.session_id, inp.assistant_seq, activity.info().attempt
            )
            if inp.stream
            else None
        )
        try:
            return await self.gateway.complete(
                inp.endpoint,
                turn.plan,
                turn.messages,
                call_id_prefix=str(inp.assistant_seq),
                transforms=inp.effective_transforms(),
                stream=stream,
            )
        except asyncio.CancelledError:
            if stream is not None and stream.text:
                await self._keep_partial(inp, stream)
            raise

    async def _keep_partial(self, inp: LlmTurnInput, stream: ChunkWriter) -> None:
        """A cancelled streamed reply: store the text so far as the turn's assistant
        message (finish reason ``cancelled``), so the next request shows what was cut off."""
        await stream.close()
        meta = LlmReplyMeta(
            turn=inp.turn,
            model=inp.endpoint.model,
            provider=inp.endpoint.provider,
            finish_reason=CANCELLED_FINISH,
            attempt=activity.info().attempt,
            streamed=True,
        )
        message = Message(role="assistant", content=stream.text)
        await self.store.put(inp.transcript.session_id, inp.assistant_seq, message, meta)


def text_call_note(inp: LlmTurnInput, turn: TurnPlan, message: Message) -> str | None:
    """A warning for a call the reply wrote as text and no transform turned into a call."""
    if message.tool_calls:
        return None
    offered = [t.name for t in turn.plan.tools] if turn.plan.tool_choice != "none" else []
    return text_call_warning(
        message.content, offered, inp.effective_transforms().response_transforms
    )


def reply_meta(
    inp: LlmTurnInput, turn: TurnPlan, done: GatewayReply, warning: str | None
) -> LlmReplyMeta:
    report = turn.report
    return LlmReplyMeta(
        turn=inp.turn,
        model=inp.endpoint.model,
        provider=inp.endpoint.provider,
        finish_reason=done.reply.finish_reason,
        latency_ms=done.latency_ms,
        usage=done.reply.usage,
        plan_fingerprint=turn.fingerprint,
        tools_sent=[t.name for t in turn.plan.tools],
        attempt=activity.info().attempt,
        transforms=list(turn.plan.transforms) or None,
        fallback_from=list(inp.fallback_from) or None,
        streamed=done.streamed or None,
        context=report if report.dropped or report.summary_seq is not None else None,
        warnings=[warning] if warning else None,
    )


def heard_in(inp: LlmTurnInput, messages: list[StoredMessage]) -> Heard:
    """What the conversation says (the system prompt, the user-role messages and the tool
    results; not the model's own calls), for the call summaries' ``args_unsaid``.

    Only the person's own messages can name a tool (``asked``): the loop's prompts name
    tools too ("There is no tool named X. The tools you have are: file_lawsuit", "Call
    file_lawsuit now"), and counting them would exempt every tool they name from the rule
    (a lawsuit filed with made-up parties for "recommend a Chinese restaurant")."""
    texts = [inp.system_prompt or ""]
    asked: list[str] = []
    for stored in messages:
        message = stored.message
        if message.role == "tool":
            texts.append(tool_result_text(message))
        elif message.role in ("user", "system"):
            texts.append(message.content or "")
            if message.from_person:
                asked.append(message.content or "")
    return Heard(texts, asked=asked)


def with_request_left(
    out: LlmTurnOutput, messages: list[StoredMessage], reply: Message, inp: LlmTurnInput
) -> LlmTurnOutput:
    """``out`` with its ``request_left`` when the session asks for it."""
    if not inp.wants_request_left:
        return out
    return out.model_copy(update={"request_left": left_after(messages, reply, inp.tool_names)})


def left_after(
    messages: list[StoredMessage], reply: Message, offered: list[str]
) -> list[str] | None:
    """For a reply with calls: what the person's last message (``messages`` come before
    ``reply``) still asks for after every call made since, this reply's included."""
    if not reply.tool_calls:
        return None
    made: list[CallMade] = []
    for stored in reversed(messages):
        message = stored.message
        if message.from_person:
            return request_left(message.content or "", [*made, *parsed_calls(reply)], offered)
        if message.role == "assistant":
            made[:0] = parsed_calls(message)
    return None


def parsed_calls(message: Message) -> list[CallMade]:
    """The calls of ``message`` whose arguments are a JSON object."""
    calls: list[CallMade] = []
    for call in message.tool_calls:
        try:
            args = strict_loads(call.arguments) if call.arguments.strip() else {}
        except (ValueError, RecursionError):
            continue
        if isinstance(args, dict):
            calls.append((call.name, args))
    return calls


def summarize_reply(
    stored: StoredMessage,
    inp: LlmTurnInput,
    *,
    cached: bool,
    unsaid: Callable[[str, dict[str, JsonValue]], list[str]] | None = None,
) -> LlmTurnOutput:
    message = stored.message
    text = message.content or ""
    text_bytes = utf8_len(text)
    truncated = text_bytes > inp.reply_inline_bytes
    if truncated:
        text = text.encode("utf-8")[: inp.reply_inline_bytes].decode("utf-8", errors="ignore")
    calls = call_summaries(message, unsaid)
    meta = stored.meta_as(LlmReplyMeta)
    context = meta.context or ContextReport()
    return LlmTurnOutput(
        assistant_seq=stored.seq,
        text=text if message.content is not None else None,
        text_bytes=text_bytes,
        text_truncated=truncated,
        finish_reason=meta.finish_reason,
        tool_calls=calls,
        usage=meta.usage,
        latency_ms=meta.latency_ms,
        model=meta.model or inp.endpoint.model,
        plan_fingerprint=meta.plan_fingerprint,
        cached=cached,
        provider=meta.provider or inp.endpoint.provider,
        context_dropped=context.dropped,
        context_first_kept_seq=context.first_kept_seq,
        summary_covers_upto=context.summary_covers_upto,
        warnings=meta.warnings or [],
    )


def call_summaries(
    message: Message, unsaid: Callable[[str, dict[str, JsonValue]], list[str]] | None = None
) -> list[ToolCallSummary]:
    """What the workflow learns of a reply's tool calls: sizes, fingerprints, validity, and
    (given ``unsaid``) the names of required arguments whose values nobody gave."""
    calls: list[ToolCallSummary] = []
    for index, call in enumerate(message.tool_calls):
        valid, digest = arguments_fingerprint(call.arguments)
        # Blank arguments are not a JSON object: the normalisation's blank-to-{} transform
        # stores them as {}; without it (strict shapes) the loop refuses them as INVALID_JSON
        # and the model's "" goes back to the endpoint as it came.
        valid = valid and bool(call.arguments.strip())
        size = utf8_len(call.arguments)
        largest = largest_string(call.arguments) if valid and size > LARGE_ARGS_BYTES else None
        parsed = strict_loads(call.arguments) if valid and unsaid is not None else None
        args = parsed if isinstance(parsed, dict) else None
        calls.append(
            ToolCallSummary(
                index=index,
                id=call.id,
                name=call.name,
                args_bytes=size,
                args_sha256=digest,
                args_valid_json=valid,
                args_largest=f"{largest[0]} ({largest[1]} chars)" if largest else None,
                args_unsaid=unsaid(call.name, args) if args is not None and unsaid else [],
            )
        )
    return calls
