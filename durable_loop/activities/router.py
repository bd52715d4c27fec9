"""Activities of the router -> executor pipeline: one model call per step.

The workflow decides; these only talk to the model and the store. ``router_step`` returns
the raw (bounded) output of the router or the executor, which the workflow parses and
validates; ``router_answer`` writes the message's final reply (a summary of the tool
result, a direct answer, the raw tool output or the clarifying question) with the
pipeline trace as its meta.
"""

from __future__ import annotations

from temporalio import activity
from temporalio.exceptions import ApplicationError

from durable_loop.activities.appends import write_appends
from durable_loop.activities.chat import chat_once
from durable_loop.activities.gateway import LlmGateway
from durable_loop.activities.heartbeat import heartbeating
from durable_loop.activities.question import read_question
from durable_loop.core import names
from durable_loop.core.canonical_json import utf8_len
from durable_loop.core.errors import ErrorCode
from durable_loop.core.messages import Message, StoredMessage, Usage
from durable_loop.core.registry import ToolRegistry
from durable_loop.core.reply_meta import RouterReplyMeta
from durable_loop.core.router.contracts import (
    RouterAnswerInput,
    RouterAnswerOutput,
    RouterStepInput,
    RouterStepOutput,
)
from durable_loop.core.router.prompts import (
    answer_messages,
    executor_messages,
    router_messages,
    summarizer_messages,
    with_repair,
)
from durable_loop.store import TranscriptStore


def clip(text: str, limit: int) -> tuple[str, bool]:
    if utf8_len(text) <= limit:
        return text, False
    return text.encode("utf-8")[:limit].decode("utf-8", errors="ignore"), True


def tool_output_text(stored: StoredMessage | None) -> str:
    envelope = stored.message.envelope if stored else None
    if envelope is None:
        return "(no result)"
    if envelope.ok and isinstance(envelope.data, str) and not envelope.warnings:
        return envelope.data
    return envelope.to_content()


class RouterActivities:
    def __init__(
        self,
        store: TranscriptStore,
        gateway: LlmGateway,
        registry: ToolRegistry,
    ) -> None:
        self.store = store
        self.gateway = gateway
        self.registry = registry

    @activity.defn(name=names.ROUTER_STEP)
    async def router_step(self, inp: RouterStepInput) -> RouterStepOutput:
        await write_appends(self.store, inp.session_id, inp.appends)
        question, context = await read_question(
            self.store, inp.session_id, inp.user_seq, inp.context_messages
        )
        if inp.kind == "route":
            messages = router_messages(question, inp.tool_names, context)
        else:
            tool = self.registry.get(inp.tool or "")
            if tool is None:
                raise ApplicationError(
                    f"no tool named {inp.tool!r} on this worker",
                    type=ErrorCode.TOOL_NOT_FOUND,
                    non_retryable=True,
                )
            messages = executor_messages(question, tool.spec, context)
        if inp.repair is not None:
            messages = with_repair(messages, inp.repair.previous_output, inp.repair.error)
        async with heartbeating(f"router {inp.kind}"):
            reply = await chat_once(
                self.gateway, inp.endpoint, messages, inp.options, session_id=inp.session_id
            )
        text, truncated = clip(reply.text, inp.max_output_bytes)
        return RouterStepOutput(
            text=text, truncated=truncated, latency_ms=reply.latency_ms, usage=reply.usage
        )

    @activity.defn(name=names.ROUTER_ANSWER)
    async def router_answer(self, inp: RouterAnswerInput) -> RouterAnswerOutput:
        await write_appends(self.store, inp.session_id, inp.appends)
        done = await self.store.get(inp.session_id, inp.reply_seq)
        if done is not None:
            return self._summary(done, inp, cached=True)
        question, context = await read_question(
            self.store, inp.session_id, inp.user_seq, inp.context_messages
        )
        usage, latency_ms = Usage(), 0
        if inp.mode == "clarify":
            text = inp.clarify_question or ""
        elif inp.mode == "raw":
            result = await self.store.get(inp.session_id, inp.result_seq or -1)
            text = tool_output_text(result)
        else:
            if inp.mode == "summarize":
                result = await self.store.get(inp.session_id, inp.result_seq or -1)
                shown, cut = clip(tool_output_text(result), inp.summary_input_bytes)
                messages = summarizer_messages(
                    question, inp.tool or "the tool", shown + (" …(truncated)" if cut else "")
                )
            else:
                messages = answer_messages(question, context)
            async with heartbeating(f"router answer ({inp.mode})"):
                reply = await chat_once(
                    self.gateway,
                    inp.endpoint,
                    messages,
                    inp.options,
                    session_id=inp.session_id,
                )
            text, usage, latency_ms = reply.text, reply.usage, reply.latency_ms
        trace = inp.trace.model_copy(update={"summarizer_ms": latency_ms})
        meta = RouterReplyMeta(
            turn=inp.turn,
            model=inp.endpoint.model,
            mode=inp.mode,
            latency_ms=latency_ms,
            usage=usage,
            pipeline=trace,
        )
        message = Message(role="assistant", content=text)
        written = await self.store.put(inp.session_id, inp.reply_seq, message, meta)
        return self._summary(written, inp, cached=False)

    @staticmethod
    def _summary(
        stored: StoredMessage, inp: RouterAnswerInput, *, cached: bool
    ) -> RouterAnswerOutput:
        text = stored.message.content or ""
        shown, truncated = clip(text, inp.reply_inline_bytes)
        meta = stored.meta_as(RouterReplyMeta)
        return RouterAnswerOutput(
            reply_seq=stored.seq,
            text=shown,
            text_bytes=utf8_len(text),
            truncated=truncated,
            latency_ms=meta.latency_ms,
            usage=meta.usage,
            cached=cached,
        )
