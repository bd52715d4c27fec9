"""Building one LLM request from the stored transcript: tools, options, context window,
transforms, prompt plan and fingerprint. Reads the store; everything else is pure."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import JsonValue

from durable_loop.core.context_window import (
    ContextReport,
    TranscriptItem,
    build_context,
    message_chars,
    tools_chars,
)
from durable_loop.core.contracts import LlmTurnInput
from durable_loop.core.messages import Message
from durable_loop.core.plan import PromptPlan
from durable_loop.core.providers import ProviderAdapter, ProviderRequest
from durable_loop.core.registry import ToolRegistry
from durable_loop.core.transforms.registry import (
    render_tool_results,
    transform_tools,
    transform_wire_messages,
)
from durable_loop.store import StoredMessage, TranscriptStore

SUMMARY_META_KEY = "summary_of"
TAIL_PAGE = 64


@dataclass(frozen=True)
class TurnRequest:
    plan: PromptPlan
    messages: list[Message]
    request: ProviderRequest
    report: ContextReport
    fingerprint: str


def transcript_items(
    history: list[StoredMessage], tool_result_transforms: list[str]
) -> list[TranscriptItem]:
    rendered = render_tool_results(tool_result_transforms, [s.message for s in history])
    items = []
    for stored, message in zip(history, rendered, strict=True):
        covers = stored.meta.get(SUMMARY_META_KEY)
        items.append(
            TranscriptItem(
                seq=stored.seq,
                message=message,
                summary_of=covers if isinstance(covers, int) else None,
            )
        )
    return items


async def window_history(
    store: TranscriptStore, session_id: str, upto_seq: int, budget_chars: int
) -> tuple[list[StoredMessage], int]:
    """What a context window of ``budget_chars`` can keep, without reading the whole
    transcript: the newest whole units (a tool result is never the oldest row read) holding
    more than the budget, plus the newest older summary. Returns the messages, oldest first,
    and how many older ones were not read (they would all be left out).

    Reading everything made each LLM turn cost O(transcript): at 5,000 turns (20,000
    messages) about 2 s of store reads and parsing per call (bench/history_per_turn.py).
    """
    tail: list[StoredMessage] = []
    chars = 0
    cursor = upto_seq
    while True:
        page = await store.read_newest(session_id, cursor, TAIL_PAGE)
        tail.extend(page)
        chars += sum(message_chars(m.message) for m in page)
        if len(page) < TAIL_PAGE:
            return list(reversed(tail)), 0
        cursor = page[-1].seq
        if chars > budget_chars and tail[-1].message.role != "tool":
            break
    oldest = tail[-1].seq
    older = [m for m in await store.read_role(session_id, "system", oldest) if _covers(m)]
    newest = max([m for m in tail if _covers(m)] + older[-1:], key=lambda m: m.seq, default=None)
    covers = min(_covers(newest), oldest) if newest else 0
    # What build_context would report as dropped: older rows the summary does not cover.
    unread = await store.count(session_id, oldest) - await store.count(session_id, covers)
    unread -= sum(1 for m in older if m.seq >= covers)
    return older[-1:] + list(reversed(tail)), unread


def _covers(stored: StoredMessage) -> int:
    covers = stored.meta.get(SUMMARY_META_KEY)
    return covers if isinstance(covers, int) else 0


def request_options(inp: LlmTurnInput, send_tools: bool) -> dict[str, JsonValue]:
    """The endpoint's own options, then the runtime overrides, then parallel_tool_calls."""
    options: dict[str, JsonValue] = {**inp.endpoint.llm_options, **inp.request_overrides}
    if send_tools and inp.parallel_tool_calls is not None:
        options["parallel_tool_calls"] = inp.parallel_tool_calls
    return options


@dataclass(frozen=True)
class TurnHistory:
    messages: list[StoredMessage]
    """What the request may carry, oldest first."""
    unread: int
    """Older messages not read because the context window leaves them out anyway."""
    reply: StoredMessage | None
    """The reply an earlier attempt of this activity already stored at ``assistant_seq``."""


async def turn_history(store: TranscriptStore, inp: LlmTurnInput) -> TurnHistory:
    """The transcript before the reply's seq, and the reply itself if it exists. Without a
    context window both come from one read (the reply is the row at ``assistant_seq``)."""
    session_id, seq = inp.transcript.session_id, inp.assistant_seq
    window = inp.endpoint.context_window
    budget = window.budget_chars() if window else None
    if budget is None:
        rows = await store.read(session_id, upto_seq=seq + 1)
        if rows and rows[-1].seq == seq:
            return TurnHistory(messages=rows[:-1], unread=0, reply=rows[-1])
        return TurnHistory(messages=rows, unread=0, reply=None)
    reply = await store.get(session_id, seq)
    if reply is not None:
        return TurnHistory(messages=[], unread=0, reply=reply)
    messages, unread = await window_history(store, session_id, seq, budget)
    return TurnHistory(messages=messages, unread=unread, reply=None)


def build_turn_request(
    registry: ToolRegistry,
    adapter: ProviderAdapter,
    inp: LlmTurnInput,
    history: TurnHistory,
) -> TurnRequest:
    transforms = inp.effective_transforms()
    tools = registry.specs(inp.tool_names) if inp.send_tools else []
    tools = transform_tools(transforms.tool_transforms, tools)
    window = inp.endpoint.context_window
    unread = history.unread
    context = build_context(
        transcript_items(history.messages, transforms.tool_result_transforms),
        system_prompt=inp.system_prompt,
        window=window,
        fixed_chars=tools_chars(tools) if window else 0,
    )
    if unread:
        dropped = context.report.dropped + unread
        context = context.model_copy(
            update={"report": context.report.model_copy(update={"dropped": dropped})}
        )
    plan = PromptPlan(
        model=inp.endpoint.model,
        provider=inp.endpoint.provider,
        session_id=inp.transcript.session_id,
        upto_seq=inp.transcript.upto_seq,
        tools=tools,
        tool_choice=inp.tool_choice if tools else None,
        llm_options=request_options(inp, bool(tools)),
        transforms=transforms.all_names(),
    )
    request = adapter.build_request(plan, context.messages)
    body = transform_wire_messages(
        transforms.message_transforms, request.body, adapter.messages_key
    )
    return TurnRequest(
        plan=plan,
        messages=context.messages,
        request=request.model_copy(update={"body": body}),
        report=context.report,
        fingerprint=plan.fingerprint(context.messages),
    )
