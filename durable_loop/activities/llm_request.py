"""Building one LLM request from the stored transcript: tools, options, context window,
transforms, prompt plan and fingerprint. Reads the store; everything else is pure."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import JsonValue

from durable_loop.activities.store import StoredMessage, TranscriptStore
from durable_loop.toolcalling.context_window import (
    ContextReport,
    TranscriptItem,
    build_context,
    tools_chars,
)
from durable_loop.toolcalling.contracts import LlmTurnInput
from durable_loop.toolcalling.messages import Message
from durable_loop.toolcalling.plan import PromptPlan
from durable_loop.toolcalling.providers import ProviderAdapter, ProviderRequest
from durable_loop.toolcalling.registry import ToolRegistry
from durable_loop.toolcalling.transforms.registry import (
    render_tool_results,
    transform_tools,
    transform_wire_messages,
)

SUMMARY_META_KEY = "summary_of"


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


def request_options(inp: LlmTurnInput, send_tools: bool) -> dict[str, JsonValue]:
    """The endpoint's own options, then the runtime overrides, then parallel_tool_calls."""
    options: dict[str, JsonValue] = {**inp.endpoint.llm_options, **inp.request_overrides}
    if send_tools and inp.parallel_tool_calls is not None:
        options["parallel_tool_calls"] = inp.parallel_tool_calls
    return options


async def build_turn_request(
    store: TranscriptStore,
    registry: ToolRegistry,
    adapter: ProviderAdapter,
    inp: LlmTurnInput,
) -> TurnRequest:
    transforms = inp.transforms
    tools = registry.specs(inp.tool_names) if inp.send_tools else []
    tools = transform_tools(transforms.tool_transforms, tools)
    history = await store.read(inp.transcript.session_id, upto_seq=inp.assistant_seq)
    context = build_context(
        transcript_items(history, transforms.tool_result_transforms),
        system_prompt=inp.system_prompt,
        window=inp.endpoint.context_window,
        fixed_chars=tools_chars(tools),
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
