"""The summarisation activity: condense the transcript prefix a context window left out
into one stored message that later requests send in its place.

It reads the messages before ``covers_upto`` (starting after the previous summary, whose
text it folds in), asks the session's model for a summary, and stores it at the seq the
workflow allocated, with ``summary_of`` in its meta. Retries find it stored and return it.
"""

from __future__ import annotations

from temporalio import activity
from temporalio.exceptions import ApplicationError

from durable_loop.activities.gateway import LlmGateway
from durable_loop.core import names
from durable_loop.core.activity_contracts import SummarizeInput, SummarizeOutput
from durable_loop.core.context_window import summary_message
from durable_loop.core.errors import ErrorCode
from durable_loop.core.messages import Message, StoredMessage
from durable_loop.core.plan import PromptPlan
from durable_loop.core.providers.base import tool_result_text
from durable_loop.core.reply_meta import SummaryMark, SummaryMeta
from durable_loop.store import TranscriptStore

SUMMARIZER_PROMPT = (
    "You compress conversations between a user, an assistant and its tools. Write a short "
    "summary of the conversation below: the user's goals, facts learned from tool results, "
    "decisions made and open questions. Plain prose, no preamble."
)
MAX_INPUT_CHARS = 24_000
LINE_CHARS = 600


def render_line(message: Message) -> str:
    if message.role == "tool":
        text = f"tool {message.name or ''} result: {tool_result_text(message)}"
    elif message.tool_calls:
        calls = ", ".join(f"{c.name}({c.arguments})" for c in message.tool_calls)
        text = f"assistant: {message.content or ''} [called {calls}]"
    else:
        text = f"{message.role}: {message.content or ''}"
    return text if len(text) <= LINE_CHARS else text[: LINE_CHARS - 1] + "…"


def summary_input(history: list[StoredMessage], covers_upto: int) -> str:
    """The previous summary (if any) and the messages it does not cover, newest kept
    when the text would exceed the input bound."""
    summaries = [s for s in history if s.meta_as(SummaryMark).summary_of is not None]
    previous = max(summaries, key=lambda s: s.seq) if summaries else None
    start = (previous.meta_as(SummaryMark).summary_of or 0) if previous else 0
    lines = [
        render_line(s.message)
        for s in history
        if start <= s.seq < covers_upto and s not in summaries and s.message.role != "system"
    ]
    while lines and sum(len(line) + 1 for line in lines) > MAX_INPUT_CHARS:
        lines.pop(0)
    head = [f"Earlier summary: {previous.message.content}"] if previous else []
    return "\n".join([*head, *lines])


class SummaryActivities:
    def __init__(self, store: TranscriptStore, gateway: LlmGateway) -> None:
        self.store = store
        self.gateway = gateway

    @activity.defn(name=names.SUMMARIZE_CONTEXT)
    async def summarize_context(self, inp: SummarizeInput) -> SummarizeOutput:
        stored = await self.store.get(inp.session_id, inp.summary_seq)
        if stored is not None:
            return _output(stored, inp, cached=True)
        endpoint = inp.endpoint
        history = await self.store.read(inp.session_id, upto_seq=inp.summary_seq)
        text = summary_input(history, inp.covers_upto)
        plan = PromptPlan(
            model=endpoint.model,
            provider=endpoint.provider,
            session_id=inp.session_id,
            upto_seq=inp.covers_upto,
            llm_options=dict(endpoint.llm_options),
        )
        messages = [Message.system(SUMMARIZER_PROMPT), Message.user(text or "(empty)")]
        done = await self.gateway.complete(
            endpoint, plan, messages, call_id_prefix=str(inp.summary_seq)
        )
        reply = done.reply
        summary = (reply.message.content or "").strip()[: inp.max_chars]
        if not summary:
            raise ApplicationError(
                "the model returned an empty summary",
                type=ErrorCode.PROVIDER_BAD_RESPONSE,
                non_retryable=True,
            )
        meta = SummaryMeta(
            summary_of=inp.covers_upto,
            model=endpoint.model,
            provider=endpoint.provider,
            usage=reply.usage,
            latency_ms=done.latency_ms,
        )
        written = await self.store.put(
            inp.session_id, inp.summary_seq, summary_message(summary), meta
        )
        return _output(written, inp, cached=False)


def _output(stored: StoredMessage, inp: SummarizeInput, *, cached: bool) -> SummarizeOutput:
    return SummarizeOutput(
        summary_seq=stored.seq,
        covers_upto=inp.covers_upto,
        summary_chars=len(stored.message.content or ""),
        usage=stored.meta_as(SummaryMeta).usage,
        cached=cached,
    )
