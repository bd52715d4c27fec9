"""Building one LLM request from the stored transcript: tools, options, outbound
transforms, context window, prompt plan and fingerprint. Pure: the rows come in already read
(:mod:`durable_loop.activities.turn_history` reads them)."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import JsonValue

from durable_loop.core.activity_contracts import LlmTurnInput
from durable_loop.core.catalog import schema_beside_tools
from durable_loop.core.context_window import (
    Context,
    ContextReport,
    TranscriptItem,
    build_context,
    tools_chars,
)
from durable_loop.core.messages import Message, StoredMessage
from durable_loop.core.plan import PromptPlan
from durable_loop.core.providers import ADAPTERS
from durable_loop.core.registry import ToolRegistry
from durable_loop.core.reply_meta import SummaryMark
from durable_loop.core.tools import ToolSpec
from durable_loop.core.transforms.outbound import OutboundContext
from durable_loop.core.transforms.pipeline import Outbound
from durable_loop.core.typed_output import shape_for_output


@dataclass(frozen=True)
class TurnPlan:
    plan: PromptPlan
    messages: list[Message]
    """What the request carries after the context window."""
    report: ContextReport
    fingerprint: str


def transcript_items(history: list[StoredMessage], messages: list[Message]) -> list[TranscriptItem]:
    """The rows as the window reads them: ``messages`` are the rows' messages as sent
    (tool results rendered by the outbound transforms)."""
    return [
        TranscriptItem(
            seq=stored.seq, message=message, summary_of=stored.meta_as(SummaryMark).summary_of
        )
        for stored, message in zip(history, messages, strict=True)
    ]


def covers(stored: StoredMessage) -> int:
    """For a stored summary, the seq below which it stands for the transcript; else 0."""
    return stored.meta_as(SummaryMark).summary_of or 0


def request_options(inp: LlmTurnInput, send_tools: bool) -> dict[str, JsonValue]:
    """The endpoint's own options, then the runtime overrides, then parallel_tool_calls."""
    options: dict[str, JsonValue] = {**inp.endpoint.llm_options, **inp.request_overrides}
    if send_tools and inp.parallel_tool_calls is not None:
        options["parallel_tool_calls"] = inp.parallel_tool_calls
    return options


def reply_token_cap(inp: LlmTurnInput) -> int | None:
    """The reply's token cap the request sets (OpenAI ``max_tokens`` or
    ``max_completion_tokens``, Anthropic ``max_tokens``, Gemini
    ``generationConfig.maxOutputTokens``); None when it sets none."""
    options: dict[str, JsonValue] = {**inp.endpoint.llm_options, **inp.request_overrides}
    generation = options.get("generationConfig")
    caps = [
        options.get("max_tokens"),
        options.get("max_completion_tokens"),
        generation.get("maxOutputTokens") if isinstance(generation, dict) else None,
    ]
    found = [cap for cap in caps if isinstance(cap, int) and not isinstance(cap, bool)]
    return min(found) if found else None


def no_call_keeps_tools(provider: str, history: list[StoredMessage]) -> bool:
    """A request without tools keeps them, asking for no call, when the provider needs
    tools defined beside the tool calls and results the messages carry."""
    adapter = ADAPTERS.get(provider)
    return (
        adapter is not None
        and adapter.no_call_keeps_tools
        and any(s.message.role == "tool" or s.message.tool_calls for s in history)
    )


@dataclass(frozen=True)
class TurnHistory:
    messages: list[StoredMessage]
    """What the request may carry, oldest first."""
    unread: int
    """Older messages not read because the context window leaves them out anyway."""
    reply: StoredMessage | None
    """The reply an earlier attempt of this activity already stored at ``assistant_seq``."""


def plan_turn(registry: ToolRegistry, inp: LlmTurnInput, history: TurnHistory) -> TurnPlan:
    """The plan and messages of one LLM turn: the tools offered, the outbound transforms
    the window and fingerprint must see, the shape of a typed answer, the context window
    and the prompt plan. Encoding for a provider is :meth:`Outbound.encode`."""
    session = OutboundContext(
        max_args_bytes=inp.max_tool_args_bytes, max_reply_tokens=reply_token_cap(inp)
    )
    outbound = Outbound(inp.effective_transforms(), session)
    tools, tool_choice = offered_tools(registry, inp, history.messages)
    tools, transcript = outbound.before_plan(tools, [s.message for s in history.messages])
    options = request_options(inp, bool(tools))
    if inp.output_schema is not None:
        tools, tool_choice, options = shape_for_output(
            inp.endpoint.provider,
            inp.endpoint.structured_output,
            inp.output_schema,
            tools=tools,
            tool_choice=tool_choice,
            options=options,
            schema_beside_tools=schema_beside_tools(inp.endpoint.provider, inp.endpoint.model),
        )
    context = windowed(inp, history, transcript_items(history.messages, transcript), tools)
    plan = PromptPlan(
        model=inp.endpoint.model,
        provider=inp.endpoint.provider,
        session_id=inp.transcript.session_id,
        upto_seq=inp.transcript.upto_seq,
        tools=tools,
        tool_choice=tool_choice if tools else None,
        llm_options=options,
        transforms=outbound.transforms.all_names(),
    )
    return TurnPlan(
        plan=plan,
        messages=context.messages,
        report=context.report,
        fingerprint=plan.fingerprint(context.messages),
    )


def offered_tools(
    registry: ToolRegistry, inp: LlmTurnInput, history: list[StoredMessage]
) -> tuple[list[ToolSpec], str | dict[str, JsonValue] | None]:
    """The tools (masked) and tool_choice of the request, before any transform."""
    if inp.send_tools:
        return registry.specs(inp.tool_names), inp.tool_choice
    if inp.tool_names and no_call_keeps_tools(inp.endpoint.provider, history):
        return registry.specs(inp.tool_names), "none"
    return [], inp.tool_choice


def windowed(
    inp: LlmTurnInput, history: TurnHistory, items: list[TranscriptItem], tools: list[ToolSpec]
) -> Context:
    """The context window over ``items``; rows the read left out count as dropped."""
    window = inp.endpoint.context_window
    context = build_context(
        items,
        system_prompt=inp.system_prompt,
        window=window,
        fixed_chars=tools_chars(tools) if window else 0,
    )
    if not history.unread:
        return context
    dropped = context.report.dropped + history.unread
    return context.model_copy(
        update={"report": context.report.model_copy(update={"dropped": dropped})}
    )
