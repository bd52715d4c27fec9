"""One request through the transform pipeline: each point once, in the documented order,
outbound while the request is built and encoded, inbound while the reply is read."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from durable_loop.core.activity_contracts import LlmTurnInput, TranscriptRef
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.envelope import Envelope
from durable_loop.core.messages import Message, StoredMessage, ToolCall
from durable_loop.core.providers import ADAPTERS
from durable_loop.core.providers.base import synthetic_call_id
from durable_loop.core.registry import ToolRegistry
from durable_loop.core.request import TurnHistory, plan_turn
from durable_loop.core.transforms import registry
from durable_loop.core.transforms.inbound import InboundContext
from durable_loop.core.transforms.names import TransformSet
from durable_loop.core.transforms.pipeline import INBOUND_ORDER, OUTBOUND_ORDER, Inbound, Outbound

POINTS: list[tuple[dict[str, Callable[..., Any]], str, str]] = [
    (registry.TOOL_RESULTS, "tool_result_transforms", "tool_result_compact_envelope"),
    (registry.TOOLS, "tool_transforms", "openai_tools_strip_function_descriptions"),
    (registry.MESSAGE, "message_transforms", "assistant_tool_calls_content_null_if_blank"),
    (registry.RESPONSE, "response_transforms", "assistant_tool_calls_object_to_array"),
    (
        registry.TOOL_CALLS,
        "tool_call_transforms",
        "assistant_tool_calls_arguments_blank_to_empty_object",
    ),
]
TRANSFORMS = TransformSet(**{point: [name] for _, point, name in POINTS})
REPLY = {
    "choices": [
        {
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "add", "arguments": ""},
                },
            },
            "finish_reason": "tool_calls",
        }
    ],
    "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
}


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def record_points(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """Every call of the five transforms, as (point, first argument)."""
    calls: list[tuple[str, Any]] = []
    for table, point, name in POINTS:
        original = table[name]

        def recorded(*args: Any, _point: str = point, _original: Any = original) -> Any:
            calls.append((_point, args[0]))
            return _original(*args)

        monkeypatch.setitem(table, name, recorded)
    return calls


def turn_input() -> LlmTurnInput:
    return LlmTurnInput(
        transcript=TranscriptRef(session_id="s", upto_seq=3),
        turn=2,
        assistant_seq=9,
        endpoint=LlmEndpoint(provider="openai", model="m"),
        tool_names=["add"],
        send_tools=True,
        transforms=TRANSFORMS,
        provider_normalization=False,
    )


def history() -> TurnHistory:
    call = ToolCall(id="c1", name="add", arguments='{"a": 2, "b": 3}')
    rows = [
        Message.user("add 2 and 3"),
        Message(role="assistant", content="", tool_calls=[call]),
        Message.tool_result("c1", "add", Envelope.success(5)),
    ]
    stored = [StoredMessage(seq=seq, message=message) for seq, message in enumerate(rows)]
    return TurnHistory(messages=stored, unread=0, reply=None)


def test_the_order_is_outbound_then_inbound_point_by_point():
    assert [*OUTBOUND_ORDER, *INBOUND_ORDER] == [point for _, point, _ in POINTS]


def test_one_request_meets_each_point_in_order_and_sends_what_they_made(monkeypatch):
    calls = record_points(monkeypatch)
    tools = ToolRegistry()
    tools.register(add)
    inp = turn_input()
    adapter = ADAPTERS["openai"]

    turn = plan_turn(tools, inp, history())
    request = Outbound(inp.effective_transforms()).encode(adapter, turn.plan, turn.messages)
    context = InboundContext(call_id_prefix="9", tool_names=["add"])
    reply = Inbound(context, inp.effective_transforms()).read(adapter, json.dumps(REPLY))

    order = list(dict.fromkeys(point for point, _ in calls))
    assert order == [*OUTBOUND_ORDER, *INBOUND_ORDER]
    assert len([point for point, _ in calls if point == "message_transforms"]) == 3
    body = request.body
    assert body["tools"][0]["function"].get("description") is None
    assert body["messages"][1]["content"] is None  # the blank content beside a call
    assert json.loads(body["messages"][2]["content"]) == {"ok": True, "data": 5}
    assert turn.plan.transforms == TRANSFORMS.all_names()
    assert reply.message.tool_calls == [ToolCall(id="call_1", name="add", arguments="{}")]


def test_the_tool_call_point_sees_calls_after_id_less_ones_got_their_ids(monkeypatch):
    calls = record_points(monkeypatch)
    raw = json.dumps(
        {
            "candidates": [
                {
                    "content": {
                        "role": "model",
                        "parts": [{"functionCall": {"name": "add", "args": {"a": 2, "b": 3}}}],
                    },
                    "finishReason": "STOP",
                }
            ]
        }
    )
    inbound = Inbound(InboundContext(call_id_prefix="9"), TRANSFORMS)
    reply = inbound.read(ADAPTERS["gemini"], raw)
    synthetic = synthetic_call_id("9", 0)
    assert [c.id for c in dict(calls)["tool_call_transforms"]] == [synthetic]
    assert [c.id for c in reply.message.tool_calls] == [synthetic]


def test_no_transforms_sends_the_adapters_request_and_reads_its_parse():
    adapter = ADAPTERS["openai"]
    turn = plan_turn(ToolRegistry(), turn_input(), history())
    assert Outbound().encode(adapter, turn.plan, turn.messages) == adapter.build_request(
        turn.plan, turn.messages
    )
    raw = json.dumps({**REPLY, "choices": [{"message": {"role": "assistant", "content": "5"}}]})
    read = Inbound(InboundContext(call_id_prefix="9")).read(adapter, raw)
    assert read == adapter.parse_response(json.loads(raw), raw)


@pytest.mark.parametrize(
    ("options", "overrides", "capped"),
    [
        ({}, {}, True),
        ({"max_tokens": 768}, {}, True),
        ({"max_tokens": 768}, {"max_tokens": 10}, False),
        ({"max_completion_tokens": 20}, {}, False),
        ({"generationConfig": {"maxOutputTokens": 20}}, {}, False),
    ],
)
def test_the_argument_budget_reaches_the_tools_where_the_reply_can_reach_it(
    options, overrides, capped
):
    """Budget 400: a reply of 768 tokens (or no cap) could write a string that long, one
    of 10 or 20 tokens could not, so its schemas go out as they are."""
    tools = ToolRegistry()
    tools.register(add_note)
    inp = turn_input().model_copy(
        update={
            "tool_names": ["add_note"],
            "endpoint": LlmEndpoint(provider="openai", model="m", llm_options=options),
            "request_overrides": overrides,
            "transforms": TransformSet(
                tool_transforms=["tools_string_max_length_from_args_budget"]
            ),
            "max_tool_args_bytes": 400,
        }
    )
    turn = plan_turn(tools, inp, history())
    text = turn.plan.tools[0].parameters["properties"]["text"]
    assert text.get("maxLength") == (400 if capped else None)


def add_note(text: str) -> str:
    """Save a note."""
    return text
