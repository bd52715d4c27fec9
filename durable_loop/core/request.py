"""Building one LLM request from the stored transcript: tools, options, context window,
transforms, prompt plan and fingerprint. Pure: the rows come in already read
(:mod:`durable_loop.activities.turn_history` reads them)."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import JsonValue

from durable_loop.core.activity_contracts import LlmTurnInput
from durable_loop.core.catalog import schema_beside_tools
from durable_loop.core.context_window import (
    ContextReport,
    TranscriptItem,
    build_context,
    tools_chars,
)
from durable_loop.core.messages import Message, StoredMessage
from durable_loop.core.plan import PromptPlan
from durable_loop.core.providers import ADAPTERS, ProviderAdapter, ProviderRequest
from durable_loop.core.registry import ToolRegistry
from durable_loop.core.reply_meta import SummaryMark
from durable_loop.core.transforms.registry import (
    render_tool_results,
    transform_tools,
    transform_wire_messages,
)
from durable_loop.core.typed_output import shape_for_output


@dataclass(frozen=True)
class TurnPlan:
    plan: PromptPlan
    messages: list[Message]
    """What the request carries after the context window."""
    report: ContextReport
    fingerprint: str


def transcript_items(
    history: list[StoredMessage], tool_result_transforms: list[str]
) -> list[TranscriptItem]:
    rendered = render_tool_results(tool_result_transforms, [s.message for s in history])
    items = []
    for stored, message in zip(history, rendered, strict=True):
        items.append(
            TranscriptItem(
                seq=stored.seq,
                message=message,
                summary_of=stored.meta_as(SummaryMark).summary_of,
            )
        )
    return items


def covers(stored: StoredMessage) -> int:
    """For a stored summary, the seq below which it stands for the transcript; else 0."""
    return stored.meta_as(SummaryMark).summary_of or 0


def request_options(inp: LlmTurnInput, send_tools: bool) -> dict[str, JsonValue]:
    """The endpoint's own options, then the runtime overrides, then parallel_tool_calls."""
    options: dict[str, JsonValue] = {**inp.endpoint.llm_options, **inp.request_overrides}
    if send_tools and inp.parallel_tool_calls is not None:
        options["parallel_tool_calls"] = inp.parallel_tool_calls
    return options


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
    """The plan and messages of one LLM turn: tools (masked, transformed), options,
    context window and fingerprint. Encoding for a provider is :func:`encode_request`."""
    transforms = inp.effective_transforms()
    tool_choice: str | dict[str, JsonValue] | None = inp.tool_choice
    if inp.send_tools:
        tools = registry.specs(inp.tool_names)
    elif inp.tool_names and no_call_keeps_tools(inp.endpoint.provider, history.messages):
        tools, tool_choice = registry.specs(inp.tool_names), "none"
    else:
        tools = []
    tools = transform_tools(transforms.tool_transforms, tools)
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
        tool_choice=tool_choice if tools else None,
        llm_options=options,
        transforms=transforms.all_names(),
    )
    return TurnPlan(
        plan=plan,
        messages=context.messages,
        report=context.report,
        fingerprint=plan.fingerprint(context.messages),
    )


def encode_request(
    adapter: ProviderAdapter,
    plan: PromptPlan,
    messages: list[Message],
    message_transforms: list[str],
) -> ProviderRequest:
    """The provider's request for ``plan`` and ``messages``, with the message transforms
    applied to its wire messages."""
    request = adapter.build_request(plan, messages)
    if not message_transforms:
        return request
    body = transform_wire_messages(message_transforms, request.body, adapter.messages_key)
    return request.model_copy(update={"body": body})
