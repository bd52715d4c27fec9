import json

import pytest

from durable_loop.core.router.protocol import (
    ExecutorCall,
    RouterDecision,
    StepFailure,
    clarify_of_named_argument,
    clarify_question,
    extract_json,
    is_strict_json,
    is_toolless_clarify,
    parse_executor,
    parse_router,
    stated_arguments,
    ungrounded_arguments,
)
from durable_loop.core.tools import ToolSpec
from durable_loop.evals.routing.bench_tools import travel_desk

SPECS = travel_desk().specs()
BY_NAME = {s.name: s for s in SPECS}


def route(obj) -> str:
    return json.dumps(obj)


@pytest.mark.parametrize(
    "text",
    [
        '{"choice": "call_tool", "tool": "flight_status", "question": null}',
        '```json\n{"choice": "call_tool", "tool": "flight_status", "question": null}\n```',
        'Sure! {"choice": "call_tool", "tool": "flight_status", "question": null} Hope it helps',
        '{"choice": "call_tool", "tool": "Flight-Status", "question": null}',
    ],
)
def test_router_output_is_read_from_untrusted_text(text):
    assert parse_router(text, SPECS) == RouterDecision(choice="call_tool", tool="flight_status")


def test_strictness_is_reported_separately():
    assert is_strict_json('```json\n{"a": 1}\n```')
    assert not is_strict_json('Here: {"a": 1}')
    assert not extract_json('Here: {"a": 1}').strict


@pytest.mark.parametrize(
    ("text", "code", "fragment"),
    [
        ("I think you want the weather tool", "INVALID_JSON", "no JSON object"),
        ('{"choice": "call_tool", "tool": "weather", "question": null}', "SCHEMA_INVALID", "tool"),
        ('{"choice": "maybe", "tool": null, "question": null}', "SCHEMA_INVALID", "choice"),
        ('{"choice": "call_tool", "tool": null, "question": null}', "SCHEMA_INVALID", "tool"),
        ('{"choice": "none", "tool": null}', "SCHEMA_INVALID", "'question' is a required"),
        ('{"choice": "clarify", "tool": "package_track", "question": null}', "SCHEMA_INVALID", ""),
        (
            '{"choice": "none", "tool": null, "question": null, "answer": "42"}',
            "SCHEMA_INVALID",
            "Additional properties",
        ),
    ],
)
def test_router_failures_carry_a_code_and_a_quotable_message(text, code, fragment):
    failure = parse_router(text, SPECS)
    assert isinstance(failure, StepFailure)
    assert failure.code == code and fragment in failure.message


def test_clarify_is_only_for_a_missing_identifier():
    asked = parse_router(
        route({"choice": "clarify", "tool": "package_track", "question": "Tracking number?"}),
        SPECS,
    )
    assert asked == RouterDecision(
        choice="clarify", tool="package_track", question="Tracking number?"
    )
    no_identifier = ToolSpec(name="today", description="Today's date")
    refused = parse_router(
        route({"choice": "clarify", "tool": "today", "question": "Which day?"}),
        [*SPECS, no_identifier],
    )
    assert isinstance(refused, StepFailure) and "only for a missing identifier" in refused.message


@pytest.mark.parametrize(
    ("question", "tool"),
    [
        ("What is the flight number of your flight?", "flight_status"),
        ("Which flight number?", "flight_status"),
        ("What is your tracking id?", "package_track"),
        ("What would you like a haiku about?", None),  # names no argument
        ("What is the tracking number?", None),  # tracking_id needs "id" too
    ],
)
def test_a_clarify_without_a_tool_is_read_by_the_argument_its_question_names(question, tool):
    text = route({"choice": "clarify", "tool": None, "question": question})
    assert isinstance(parse_router(text, SPECS), StepFailure)
    named = clarify_of_named_argument(text, SPECS)
    expected = (
        None if tool is None else RouterDecision(choice="clarify", tool=tool, question=question)
    )
    assert named == expected


@pytest.mark.parametrize(
    ("question", "tool"),
    [
        ("What is the tracking number?", "package_track"),
        ("Which flight?", "flight_status"),
        ("What is the order number?", None),  # no tool needs an order
        ("What would you like a haiku about?", None),
    ],
)
def test_a_clarify_is_read_by_the_distinctive_words_of_the_argument(question, tool):
    text = route({"choice": "clarify", "tool": None, "question": question})
    named = clarify_of_named_argument(text, SPECS, distinctive=True)
    assert (named.tool if named else None) == tool


@pytest.mark.parametrize(
    ("args", "said", "stated"),
    [
        ({"flight_number": "BA117"}, "Is flight BA 117 on time?", True),
        ({"flight_number": "ba-117"}, "is flight BA117 on time", True),
        ({"flight_number": "BA117"}, "Has my plane landed?", False),
        ({"flight_number": "BA1170"}, "Is flight BA 117 on time?", False),
        ({"flight_number": "BA11"}, "Is flight BA 117 on time?", False),  # a part of a run
        ({"flight_number": "LH117"}, "Is flight BA 117 on time?", False),
        ({"flight_number": ""}, "Is flight BA 117 on time?", False),
    ],
)
def test_a_value_is_stated_only_if_the_user_wrote_it(args, said, stated):
    call = ExecutorCall(tool="flight_status", args=args)
    assert stated_arguments(call, BY_NAME["flight_status"], [said]) is stated


def test_every_required_value_must_be_stated():
    spec = BY_NAME["currency_convert"]
    call = ExecutorCall(
        tool="currency_convert", args={"amount": 40, "from_currency": "EUR", "to_currency": "USD"}
    )
    assert stated_arguments(call, spec, ["40 EUR in USD please"])
    assert not stated_arguments(call, spec, ["40 euros in dollars please"])
    assert not stated_arguments(call, spec, ["EUR in USD please"])


@pytest.mark.parametrize(
    ("value", "toolless"),
    [
        ({"choice": "clarify", "tool": None, "question": "What is a haiku about clouds?"}, True),
        ({"choice": "clarify", "tool": None, "question": None}, True),
        ({"choice": "clarify", "tool": None, "question": "What is a tracking number?"}, False),
        ({"choice": "clarify", "tool": "flight_status", "question": "Which one?"}, False),
        ({"choice": "none", "tool": None, "question": "Which one?"}, False),
    ],
)
def test_a_clarify_naming_no_tool_and_no_argument_has_nothing_to_clarify(value, toolless):
    assert is_toolless_clarify(route(value), SPECS) is toolless
    assert not is_toolless_clarify("a haiku, no JSON", SPECS)


def test_bare_arguments_are_read_only_when_asked_for():
    spec = BY_NAME["package_track"]
    bare = '{"tracking_id": "TBA302998114000"}'
    assert isinstance(parse_executor(bare, spec), StepFailure)
    call = parse_executor(bare, spec, bare_args=True)
    assert call == ExecutorCall(tool="package_track", args={"tracking_id": "TBA302998114000"})
    refused = parse_executor('{"tracking": "x"}', spec, bare_args=True)
    assert isinstance(refused, StepFailure) and "tracking_id" in refused.message


def test_a_one_letter_argument_is_named_only_under_the_first_rule():
    adder = ToolSpec(
        name="add", parameters={"type": "object", "required": ["a", "b"], "properties": {}}
    )
    text = route({"choice": "clarify", "tool": None, "question": "What is a haiku?"})
    assert clarify_of_named_argument(text, [adder]) is None
    assert clarify_of_named_argument(text, [adder], distinctive=True) is None
    assert is_toolless_clarify(text, [adder])
    first_rule = clarify_of_named_argument(text, [adder], letters=True)
    assert first_rule is not None and first_rule.tool == "add"


def test_only_a_clarify_without_a_known_tool_is_read_that_way():
    for value in (
        {"choice": "none", "tool": None, "question": "What is the flight number?"},
        {"choice": "clarify", "tool": "flight_status", "question": None},
        {"choice": "clarify", "tool": None, "question": None},
    ):
        assert clarify_of_named_argument(route(value), SPECS) is None
    assert clarify_of_named_argument("no JSON here", SPECS) is None
    twins = [
        ToolSpec(
            name=name,
            parameters={"type": "object", "required": ["order_id"], "properties": {}},
        )
        for name in ("refund_order", "track_order")
    ]
    ambiguous = route({"choice": "clarify", "tool": None, "question": "Your order id?"})
    assert clarify_of_named_argument(ambiguous, twins) is None


def test_none_drops_whatever_else_was_said():
    decision = parse_router(route({"choice": "none", "tool": None, "question": "hm?"}), SPECS)
    assert decision == RouterDecision(choice="none")


def test_executor_args_are_validated_against_the_one_tool_schema():
    spec = BY_NAME["currency_convert"]
    good = {"amount": 50, "from_currency": "EUR", "to_currency": "JPY"}
    assert parse_executor(route({"tool": "currency_convert", "args": good}), spec) == ExecutorCall(
        tool="currency_convert", args=good
    )
    bad = parse_executor(
        route({"tool": "currency_convert", "args": {"amount": "50", "from_currency": "euro"}}),
        spec,
    )
    assert isinstance(bad, StepFailure) and bad.code == "SCHEMA_INVALID"
    assert "args:" in bad.message and "'to_currency' is a required property" in bad.message
    other = parse_executor(route({"tool": "flight_status", "args": {}}), spec)
    assert isinstance(other, StepFailure) and "currency_convert" in other.message


def test_executor_schema_refs_resolve_against_the_tool_schema():
    spec = ToolSpec(
        name="book",
        parameters={
            "type": "object",
            "$defs": {"seat": {"type": "string", "enum": ["aisle", "window"]}},
            "properties": {"seat": {"$ref": "#/$defs/seat"}},
            "required": ["seat"],
        },
    )
    assert parse_executor('{"tool": "book", "args": {"seat": "aisle"}}', spec).args == {
        "seat": "aisle"
    }
    refused = parse_executor('{"tool": "book", "args": {"seat": "floor"}}', spec)
    assert isinstance(refused, StepFailure) and "seat" in refused.message


@pytest.mark.parametrize(
    ("value", "hint"),
    [
        (
            {"choice": "currency_convert", "tool": None, "question": None},
            '{"choice": "call_tool", "tool": "currency_convert", "question": null}',
        ),
        ({"choice": "call_tool", "tool": None, "question": None}, "If no tool fits, choose none"),
        (
            {"choice": "clarify", "tool": None, "question": "What do you mean?"},
            "For general questions choose none",
        ),
    ],
)
def test_common_small_model_mistakes_get_plain_repair_hints(value, hint):
    failure = parse_router(route(value), SPECS)
    assert isinstance(failure, StepFailure) and hint in failure.message


def call(tool, **args) -> ExecutorCall:
    return ExecutorCall(tool=tool, args=args)


@pytest.mark.parametrize(
    ("made", "said", "missing"),
    [
        (
            call("flight_status", flight_number="BA123"),
            ["Is my flight on time?"],
            ["flight_number"],
        ),
        (call("flight_status", flight_number="UA901"), ["Has UA 901 landed yet?"], []),
        (call("flight_status", flight_number="KL642"), ["which one?", "it is kl 642"], []),
        (
            call("currency_convert", amount=100.0, from_currency="USD", to_currency="EUR"),
            ["Convert my money to euros"],
            ["amount"],
        ),
        (
            call("currency_convert", amount=1000, from_currency="USD", to_currency="CAD"),
            ["what's 1,000 bucks in loonies"],
            [],
        ),
        (
            call("package_track", tracking_id="1Z999AA10123456784"),
            ["Where is my package 1Z999AA10123456784?"],
            [],
        ),
        (call("weather_forecast", city="Paris", days=3), ["weather tomorrow?"], []),
    ],
)
def test_required_values_with_digits_the_user_never_wrote_are_ungrounded(made, said, missing):
    assert ungrounded_arguments(made, BY_NAME[made.tool], said) == missing


def test_dates_and_optional_arguments_are_not_checked_for_grounding():
    spec = ToolSpec(
        name="book",
        parameters={
            "type": "object",
            "required": ["day", "room"],
            "properties": {
                "day": {"type": "string", "format": "date"},
                "room": {"type": "integer"},
            },
        },
    )
    assert (
        ungrounded_arguments(call("book", day="2026-11-26", room=12), spec, ["room 12 tomorrow"])
        == []
    )
    assert ungrounded_arguments(
        call("book", day="2026-11-26", room=3), spec, ["a room tomorrow"]
    ) == ["room"]


def test_the_clarify_question_names_the_missing_argument_with_its_description():
    question = clarify_question(BY_NAME["flight_status"], ["flight_number"])
    assert question == (
        "To use flight_status I need the flight number (IATA flight number, e.g. BA117). "
        "What is it?"
    )
    assert parse_router(
        route({"choice": "clarify", "tool": "flight_status", "question": question}), SPECS
    ) == RouterDecision(choice="clarify", tool="flight_status", question=question)
