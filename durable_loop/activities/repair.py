"""The argument-repair activity: one focused request (no tools) that fixes a refused call.

It reads the refused call from the stored assistant message, asks the session's model to
shorten its longest value or to repair its arguments (``core.argument_repair``), and
stores the repaired call as a synthetic assistant message at the seq the workflow
allocated, marked with the recovery's name. Retries find it stored and return it.
"""

from __future__ import annotations

from temporalio import activity

from durable_loop.activities.gateway import LlmGateway
from durable_loop.activities.heartbeat import heartbeating
from durable_loop.activities.llm import call_summaries, left_after
from durable_loop.core import names
from durable_loop.core.argument_repair import (
    RepairCallInput,
    RepairCallOutput,
    repair_request,
    repaired_arguments,
    shorten_max_tokens,
    shorten_request,
    shortened_value,
    with_value,
)
from durable_loop.core.messages import Message, StoredMessage, ToolCall, Usage
from durable_loop.core.plan import PromptPlan
from durable_loop.core.reply_meta import LlmReplyMeta
from durable_loop.store import TranscriptStore


class RepairActivities:
    def __init__(self, store: TranscriptStore, gateway: LlmGateway) -> None:
        self.store = store
        self.gateway = gateway

    @activity.defn(name=names.REPAIR_TOOL_CALL)
    async def repair_tool_call(self, inp: RepairCallInput) -> RepairCallOutput:
        async with heartbeating(f"repair call {inp.call_index} of seq {inp.assistant_seq}"):
            return await self._repair(inp)

    async def _repair(self, inp: RepairCallInput) -> RepairCallOutput:
        stored = await self.store.get(inp.session_id, inp.repair_seq)
        if stored is not None:
            return await self._output(inp, stored.message, stored.meta_as(LlmReplyMeta).usage)
        assistant = await self.store.get(inp.session_id, inp.assistant_seq)
        calls = assistant.message.tool_calls if assistant is not None else []
        if inp.call_index >= len(calls):
            return RepairCallOutput(assistant_seq=inp.repair_seq, reason="no such call stored")
        call = calls[inp.call_index]
        pointer = ""
        endpoint = inp.endpoint
        options = dict(endpoint.llm_options)
        if inp.kind == "shorten_oversized_arguments":
            try:
                messages, pointer, budget = shorten_request(call.arguments, inp.max_args_bytes)
            except ValueError as err:
                return RepairCallOutput(assistant_seq=inp.repair_seq, reason=str(err))
            key = "max_completion_tokens" if "max_completion_tokens" in options else "max_tokens"
            session_max = options.get(key)
            limit = session_max if isinstance(session_max, int) else None
            options[key] = shorten_max_tokens(budget, limit)
        else:
            messages = repair_request(call.name, inp.tool_schema, call.arguments, inp.error)
        plan = PromptPlan(
            model=endpoint.model,
            provider=endpoint.provider,
            session_id=inp.session_id,
            upto_seq=inp.assistant_seq,
            llm_options=options,
        )
        done = await self.gateway.complete(
            endpoint, plan, messages, call_id_prefix=str(inp.repair_seq)
        )
        reply = done.reply
        text = reply.message.content
        if inp.kind == "shorten_oversized_arguments":
            value = shortened_value(text)
            arguments = with_value(call.arguments, pointer, value) if value else None
        else:
            arguments = repaired_arguments(text)
        if arguments is None:
            reason = f"the repair reply held no usable {'value' if pointer else 'JSON object'}"
            return RepairCallOutput(assistant_seq=inp.repair_seq, usage=reply.usage, reason=reason)
        repaired = Message(
            role="assistant",
            content=None,
            tool_calls=[ToolCall(id=f"{call.id}-repair", name=call.name, arguments=arguments)],
            synthetic=True,
        )
        meta = LlmReplyMeta(
            turn=inp.turn,
            model=endpoint.model,
            provider=endpoint.provider,
            finish_reason=reply.finish_reason,
            latency_ms=done.latency_ms,
            usage=reply.usage,
            tools_sent=[],
            attempt=activity.info().attempt,
            repair=inp.kind,
            repair_of=call.id,
        )
        written = await self.store.put(inp.session_id, inp.repair_seq, repaired, meta)
        return await self._output(inp, written.message, reply.usage)

    async def _output(
        self, inp: RepairCallInput, repaired: Message, usage: Usage
    ) -> RepairCallOutput:
        return RepairCallOutput(
            assistant_seq=inp.repair_seq,
            tool_calls=call_summaries(repaired),
            usage=usage,
            request_left=await self._request_left(inp, repaired),
        )

    async def _request_left(self, inp: RepairCallInput, repaired: Message) -> list[str] | None:
        """The repaired call's ``request_left`` when asked: the message's calls before it
        count, the refused call it replaces does not."""
        if inp.offered is None:
            return None
        messages = await self.store.read(inp.session_id, upto_seq=inp.assistant_seq + 1)
        if messages and messages[-1].seq == inp.assistant_seq:
            refused = messages.pop()
            calls = refused.message.tool_calls
            kept = [c for i, c in enumerate(calls) if i != inp.call_index]
            message = refused.message.model_copy(update={"tool_calls": kept})
            messages.append(StoredMessage(seq=refused.seq, message=message))
        return left_after(messages, repaired, inp.offered)
