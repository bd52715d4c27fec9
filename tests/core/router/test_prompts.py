"""The router prompt: what the model is told about each tool and how to decide."""

from __future__ import annotations

import json

from durable_loop.core.router.prompts import (
    ROUTER_EXAMPLES,
    router_examples,
    router_messages,
    tool_line,
)
from durable_loop.core.router.protocol import RouterDecision, parse_router
from durable_loop.core.tools import ToolSpec
from durable_loop.evals.routing.bench_tools import travel_desk

SPECS = travel_desk().specs()
EXAMPLE_SPECS = [
    ToolSpec(name="order_status", parameters={"type": "object", "required": ["order_id"]}),
    ToolSpec(name="stock_price", parameters={"type": "object", "required": ["symbol"]}),
    ToolSpec(name="translate", parameters={"type": "object", "required": ["text", "language"]}),
]


def test_each_tool_is_listed_with_its_required_arguments_and_summary():
    by_name = {s.name: s for s in SPECS}
    assert tool_line(by_name["currency_convert"]) == (
        "- currency_convert(amount, from_currency, to_currency): "
        "Convert an amount between currencies (sample rates)."
    )
    assert tool_line(by_name["weather_forecast"]).startswith("- weather_forecast(city): ")
    assert tool_line(ToolSpec(name="ping")) == "- ping()"


def test_the_router_prompt_lists_the_tools_and_keeps_the_question_as_the_user_turn():
    system, user = router_messages("Is my flight on time?", SPECS, [])
    assert system.role == "system" and user.content == "Is my flight on time?"
    for spec in SPECS:
        assert tool_line(spec) in str(system.content)
    assert str(system.content).startswith("You are a router")


def test_examples_use_other_tools_than_the_real_ones_and_are_valid_decisions():
    """Few-shot examples teach the rules on tools the router is never offered, so they
    cannot hand it the answers for a real tool set (nor for the labelled benchmark)."""
    text = router_examples()
    real = {s.name for s in SPECS}
    assert not any(name in text for name in real)
    for message, choice, tool, question in ROUTER_EXAMPLES:
        line = f"{json.dumps(message)} -> "
        assert line in text
        decided = parse_router(
            json.dumps({"choice": choice, "tool": tool, "question": question}), EXAMPLE_SPECS
        )
        assert decided == RouterDecision(
            choice=choice, tool=tool if choice != "none" else None, question=question
        )
    assert {c for _, c, _, _ in ROUTER_EXAMPLES} == {"call_tool", "clarify", "none"}


def test_the_prompt_asks_whether_a_tool_is_wanted_before_whether_its_arguments_are_given():
    system = str(router_messages("hi", SPECS, [])[0].content)
    first, second = system.index("\nA. "), system.index("\nB. ")
    assert first < second
    assert '"choice": "none"' in system[first:second]
    assert '"choice": "call_tool"' in system[second:] and '"choice": "clarify"' in system[second:]
    assert "never guess a value" in system


def test_conversation_context_precedes_the_latest_message():
    _, user = router_messages("and tomorrow?", SPECS, [("user", "weather in Oslo")])
    assert str(user.content).endswith("Latest message: and tomorrow?")
    assert "user: weather in Oslo" in str(user.content)
