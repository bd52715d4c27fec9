"""Gemini specifics: signatures round-trip, made-up ids stay off the wire, roles and order."""

from __future__ import annotations

from durable_loop.core.envelope import Envelope
from durable_loop.core.messages import Message, ToolCall
from durable_loop.core.plan import PromptPlan
from durable_loop.core.providers.base import fill_missing_call_ids
from durable_loop.core.providers.gemini import GeminiAdapter
from durable_loop.core.tools import ToolSpec

PLAN = PromptPlan(model="gemini-2.5-flash", session_id="s", upto_seq=0)


def test_id_less_calls_get_stable_ids_that_never_reach_the_wire():
    reply = GeminiAdapter().parse_response(
        {
            "candidates": [
                {
                    "content": {
                        "role": "model",
                        "parts": [
                            {"functionCall": {"name": "add", "args": {"a": 1}}},
                            {"functionCall": {"name": "add", "args": {"a": 2}}},
                        ],
                    },
                    "finishReason": "STOP",
                }
            ]
        },
        "",
    )
    message = fill_missing_call_ids(reply.message, "7")
    assert [c.id for c in message.tool_calls] == ["dlc_7_0", "dlc_7_1"]
    assert fill_missing_call_ids(reply.message, "7") == message  # same seq, same ids
    results = [
        Message.tool_result(c.id, c.name, Envelope.success(i))
        for i, c in enumerate(message.tool_calls)
    ]
    body = GeminiAdapter().build_request(PLAN, [Message.user("go"), message, *results]).body
    model_turn, response_turn = body["contents"][1], body["contents"][2]
    assert all("id" not in p["functionCall"] for p in model_turn["parts"])
    assert [p["functionResponse"]["response"]["data"] for p in response_turn["parts"]] == [0, 1]
    assert all("id" not in p["functionResponse"] for p in response_turn["parts"])


def test_thought_signature_is_sent_back_verbatim():
    call = ToolCall(id="fc_1", name="add", arguments="{}", signature="SIG==")
    body = (
        GeminiAdapter()
        .build_request(
            PLAN,
            [
                Message.user("go"),
                Message(role="assistant", tool_calls=[call]),
                Message.tool_result("fc_1", "add", Envelope.success(1)),
            ],
        )
        .body
    )
    assert body["contents"][1]["parts"][0]["thoughtSignature"] == "SIG=="


def test_non_object_tool_output_is_wrapped_and_named_tool_choice_maps_to_any():
    plan = PLAN.model_copy(
        update={
            "tools": [ToolSpec(name="add")],
            "tool_choice": {"type": "function", "function": {"name": "add"}},
        }
    )
    result = Message.tool_result("x", "add", Envelope.success(1)).model_copy(
        update={"content": "plain text"}
    )
    body = (
        GeminiAdapter()
        .build_request(
            plan,
            [
                Message.user("go"),
                Message(role="assistant", tool_calls=[ToolCall(id="x", name="add")]),
                result,
            ],
        )
        .body
    )
    assert body["contents"][2]["parts"][0]["functionResponse"]["response"] == {
        "result": "plain text"
    }
    assert body["toolConfig"] == {
        "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["add"]}
    }


def test_options_map_into_generation_config_and_unknown_ones_pass_through():
    plan = PLAN.model_copy(
        update={
            "llm_options": {
                "temperature": 0.5,
                "top_p": 0.9,
                "top_k": 20,
                "stop": "END",
                "min_p": 0.1,
                "safetySettings": [
                    {"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}
                ],
            }
        }
    )
    body = GeminiAdapter().build_request(plan, [Message.user("hi")]).body
    assert body["generationConfig"] == {
        "temperature": 0.5,
        "topP": 0.9,
        "topK": 20,
        "stopSequences": ["END"],
    }
    assert body["safetySettings"][0]["threshold"] == "BLOCK_NONE"
    assert "tools" not in body and "toolConfig" not in body
