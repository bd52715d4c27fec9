"""Anthropic's ordering rules hold for any canonical message list."""

from __future__ import annotations

from durable_loop.core.envelope import Envelope
from durable_loop.core.messages import Message, ToolCall
from durable_loop.core.plan import PromptPlan
from durable_loop.core.providers.anthropic import AnthropicAdapter
from durable_loop.core.tools import ToolSpec

PLAN = PromptPlan(model="claude-opus-4-6", session_id="s", upto_seq=0)


def body(messages: list[Message]) -> dict:
    return AnthropicAdapter().build_request(PLAN, messages).body


def calls(*ids: str) -> Message:
    return Message(
        role="assistant",
        tool_calls=[ToolCall(id=i, name="add", arguments='{"a":1}') for i in ids],
    )


def result(call_id: str, ok: bool = True) -> Message:
    envelope = Envelope.success(2) if ok else Envelope.failure("TOOL_ERROR", "boom")
    return Message.tool_result(call_id, "add", envelope)


def shape(wire: dict) -> list[tuple[str, list[str]]]:
    """(role, [block type:id]) per turn, for compact assertions."""
    out = []
    for turn in wire["messages"]:
        blocks = [
            f"{b['type']}:{b.get('id') or b.get('tool_use_id') or b.get('text')}"
            for b in turn["content"]
        ]
        out.append((turn["role"], blocks))
    return out


def test_tool_results_follow_their_tool_use_and_come_before_text():
    wire = body(
        [
            Message.system("be brief"),
            Message.user("add"),
            calls("t1", "t2"),
            result("t1"),
            Message.user("(note from the loop)", synthetic=True),
            result("t2", ok=False),
        ]
    )
    assert wire["system"] == "be brief"
    assert shape(wire) == [
        ("user", ["text:add"]),
        ("assistant", ["tool_use:t1", "tool_use:t2"]),
        ("user", ["tool_result:t1", "tool_result:t2", "text:(note from the loop)"]),
    ]
    assert [b["is_error"] for b in wire["messages"][2]["content"][:2]] == [False, True]


def test_consecutive_same_role_turns_are_merged_and_roles_alternate():
    wire = body(
        [
            Message.user("one"),
            Message.user("two"),
            Message(role="assistant", content="a"),
            Message(role="assistant", content="b"),
            Message.user("three"),
        ]
    )
    assert shape(wire) == [
        ("user", ["text:one", "text:two"]),
        ("assistant", ["text:a", "text:b"]),
        ("user", ["text:three"]),
    ]


def test_a_missing_result_is_filled_and_an_orphan_result_dropped():
    wire = body([Message.user("go"), result("lost"), calls("t1", "t2"), result("t2")])
    assert shape(wire) == [
        ("user", ["text:go"]),
        ("assistant", ["tool_use:t1", "tool_use:t2"]),
        ("user", ["tool_result:t1", "tool_result:t2"]),
    ]
    filled = wire["messages"][2]["content"][0]
    assert filled["is_error"] is True and "no result was recorded" in filled["content"]


def test_results_match_by_id_within_their_turn_when_ids_repeat_across_turns():
    wire = body(
        [Message.user("go"), calls("c0"), result("c0"), calls("c0"), result("c0", ok=False)]
    )
    results = [t["content"][0] for t in wire["messages"] if t["role"] == "user"][1:]
    assert [r["is_error"] for r in results] == [False, True]


def test_a_context_starting_with_the_assistant_gets_a_leading_user_turn():
    wire = body([Message(role="assistant", content="earlier answer"), Message.user("next")])
    assert wire["messages"][0]["role"] == "user"
    assert [t["role"] for t in wire["messages"]] == ["user", "assistant", "user"]


def test_empty_assistant_turns_are_left_out():
    wire = body(
        [Message.user("hi"), Message(role="assistant", content="  "), Message.user("again")]
    )
    assert shape(wire) == [("user", ["text:hi", "text:again"])]


def test_tool_choice_and_parallel_mapping():
    named = PLAN.model_copy(
        update={
            "tools": [],
            "tool_choice": {"type": "function", "function": {"name": "add"}},
        }
    )
    plan = named.model_copy(update={"tools": [ToolSpec(name="add")]})
    assert AnthropicAdapter().build_request(plan, [Message.user("x")]).body["tool_choice"] == {
        "type": "tool",
        "name": "add",
    }
    required = plan.model_copy(
        update={"tool_choice": "required", "llm_options": {"parallel_tool_calls": False}}
    )
    got = AnthropicAdapter().build_request(required, [Message.user("x")]).body
    assert got["tool_choice"] == {"type": "any", "disable_parallel_tool_use": True}
    assert "parallel_tool_calls" not in got and got["max_tokens"] == 4096
