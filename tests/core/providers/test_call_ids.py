"""Foreign tool-call ids reach each provider in a form it accepts, still paired.

A conversation that began on an OpenAI-compatible server (Kimi-style ``functions.add:0``
ids, repeated across turns; a Responses-style 53-character ``fc_…`` id) falls back to
Anthropic or Gemini, and one that began on Anthropic or Gemini falls back to OpenAI.
"""

from __future__ import annotations

import re

import pytest

from durable_loop.core.envelope import Envelope
from durable_loop.core.messages import Message, ToolCall
from durable_loop.core.plan import PromptPlan
from durable_loop.core.providers import ADAPTERS
from durable_loop.core.providers.call_ids import (
    ANTHROPIC_IDS,
    GEMINI_IDS,
    OPENAI_IDS,
    CallIdRule,
    wire_call_ids,
)
from durable_loop.core.providers.pairing import pair_tool_results
from durable_loop.core.tools import ToolSpec

ANTHROPIC_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
LONG_ID = "fc_0f0e50a1476a6c35006912c58dc9f8819192c25864eb16f07f"  # 53 characters
TOOLS = [ToolSpec(name="add", description="add", parameters={"type": "object"})]


def plan(provider: str) -> PromptPlan:
    return PromptPlan(model="m", provider=provider, session_id="s", upto_seq=0, tools=TOOLS)


def turn(*ids: str) -> list[Message]:
    """One assistant turn calling ``add`` once per id, then the results, in reverse order
    (the transcript may hold them in any order; pairing puts them back)."""
    calls = [ToolCall(id=i, name="add", arguments=f'{{"a":{n}}}') for n, i in enumerate(ids)]
    results = [Message.tool_result(i, "add", Envelope.success(f"r{n}")) for n, i in enumerate(ids)]
    return [Message(role="assistant", tool_calls=calls), *reversed(results)]


def conversation() -> list[Message]:
    return [
        Message.system("sys"),
        Message.user("add twice"),
        *turn("functions.add:0", "functions.add:1"),
        Message.user("again"),
        *turn("functions.add:0", LONG_ID, "call_abc"),
        Message.user("and once more"),
        *turn("toolu_01A09q90qw90lq917835lq9"),
    ]


def anthropic_pairs(body: dict) -> tuple[list[str], list[list[tuple[str, str]]]]:
    """All tool_use ids, and per user turn after a tool_use turn, (tool_use_id, result)."""
    uses: list[str] = []
    answered: list[list[tuple[str, str]]] = []
    for wire in body["messages"]:
        blocks = wire["content"]
        if wire["role"] == "assistant":
            uses.extend(b["id"] for b in blocks if b["type"] == "tool_use")
        results = [(b["tool_use_id"], b["content"]) for b in blocks if b["type"] == "tool_result"]
        if results:
            answered.append(results)
    return uses, answered


def test_anthropic_gets_pattern_safe_unique_ids_paired_with_their_results():
    body = ADAPTERS["anthropic"].build_request(plan("anthropic"), conversation()).body
    uses, answered = anthropic_pairs(body)
    assert len(uses) == 6
    assert all(ANTHROPIC_ID.match(i) for i in uses), uses
    assert len(set(uses)) == len(uses)  # functions.add:0 repeats across turns
    # Each result turn answers the calls of the turn before it, in call order.
    turns = [
        [b for b in w["content"] if b["type"] == "tool_use"]
        for w in body["messages"]
        if w["role"] == "assistant"
    ]
    for calls, results in zip(turns, answered, strict=True):
        assert [r[0] for r in results] == [c["id"] for c in calls]
        assert [r[1] for r in results] == [
            Envelope.success(f"r{n}").to_content() for n in range(len(calls))
        ]
    # Ids Anthropic accepts are sent as they are; the others keep their readable part.
    assert uses[4:] == ["call_abc", "toolu_01A09q90qw90lq917835lq9"]
    assert uses[0].startswith("functions_add_0_") and uses[1].startswith("functions_add_1_")
    assert uses[3].startswith("fc_0f0e50a1476a6c")


def test_openai_keeps_kimi_ids_and_shortens_ids_over_40_characters():
    body = ADAPTERS["openai"].build_request(plan("openai"), conversation()).body
    assistant = [m for m in body["messages"] if m["role"] == "assistant"]
    ids = [c["id"] for m in assistant for c in m["tool_calls"]]
    assert ids[:3] == ["functions.add:0", "functions.add:1", "functions.add:0"]
    assert ids[4:] == ["call_abc", "toolu_01A09q90qw90lq917835lq9"]
    assert ids[3] != LONG_ID and len(ids[3]) <= 40 and ids[3].startswith("fc_")
    answers = [m["tool_call_id"] for m in body["messages"] if m["role"] == "tool"]
    assert answers == ids


def test_gemini_ids_are_safe_and_each_response_carries_its_calls_id():
    messages = [
        Message.user("go"),
        *turn("functions.add:0", "dlc_4_1"),
        Message.user("again"),
        *turn("functions.add:0"),
    ]
    body = ADAPTERS["gemini"].build_request(plan("gemini"), messages).body
    parts = [part for content in body["contents"] for part in content["parts"]]
    calls = [p["functionCall"] for p in parts if "functionCall" in p]
    responses = [p["functionResponse"] for p in parts if "functionResponse" in p]
    assert [c.get("id") for c in calls] == [r.get("id") for r in responses]
    sent = [c["id"] for c in calls if "id" in c]
    assert len(sent) == 2 and len(set(sent)) == 2  # the made-up dlc_ id stays off the wire
    assert all(ANTHROPIC_ID.match(i) for i in sent)
    for call, response in zip(calls, responses, strict=True):
        assert response["name"] == call["name"]
        assert response["response"]["data"] == f"r{call['args']['a']}"


@pytest.mark.parametrize("rule", [ANTHROPIC_IDS, GEMINI_IDS, OPENAI_IDS])
def test_different_ids_never_share_a_wire_id(rule: CallIdRule):
    # Ids that collapse to the same safe characters, and a valid id equal to the form
    # another id would take: still one wire id each.
    taken = rule.safe_form("a.b", 0, 0)
    ids = ["a.b", "a:b", "a b", "a_b", taken, "x" * 80, "x" * 81, "", "é"]
    wire = wire_call_ids(pair_tool_results(turn(*ids)), rule)
    sent = [c.id for c in wire[0].tool_calls]
    assert len(set(sent)) == len(ids), sent
    assert all(rule.accepts(i) for i in sent)
    assert sent[ids.index("a_b")] == "a_b" and sent[ids.index(taken)] == taken
    for result in wire[1:]:  # each result still answers its own call
        assert result.envelope is not None
        assert result.tool_call_id == sent[int(str(result.envelope.data)[1:])]


def test_the_mapping_is_stable_across_requests_and_leaves_the_transcript_alone():
    first = conversation()[:6]
    later = conversation()
    before = [m.model_copy(deep=True) for m in later]
    adapter = ADAPTERS["anthropic"]
    early = adapter.build_request(plan("anthropic"), first).body["messages"]
    grown = adapter.build_request(plan("anthropic"), later).body["messages"]
    assert grown[: len(early)] == early  # same ids for the same calls as the talk grows
    assert adapter.build_request(plan("anthropic"), later).body["messages"] == grown
    assert later == before


def test_ids_every_provider_accepts_go_out_unchanged():
    messages = [Message.user("go"), *turn("call_12345xyz", "toolu_01A09q90qw90lq917835lq9")]
    for rule in (ANTHROPIC_IDS, GEMINI_IDS, OPENAI_IDS):
        assert wire_call_ids(messages, rule) is messages
