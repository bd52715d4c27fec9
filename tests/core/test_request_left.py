"""``request_left``: what a person's request still asks for after the calls made for it.
Erring towards "something is left" only keeps the tools one more turn; the cases here are
the ones where saying "nothing" would lose a step, and the ones it must finish."""

from __future__ import annotations

import pytest

from durable_loop.core.request_left import request_left

DEMO = ["calculate", "note_add", "note_list"]


def calc(expression: str) -> tuple[str, dict[str, object]]:
    return ("calculate", {"expression": expression})


@pytest.mark.parametrize(
    ("request_text", "calls", "offered"),
    [
        ("What is 17 * 23?", [calc("17 * 23")], DEMO),
        ("Compute 37 times 43 and tell me the result.", [calc("37 * 43")], DEMO),
        ("Remind me to call mum on Sunday.", [("note_add", {"text": "Call mum on Sunday"})], DEMO),
        ("How many notes do I have?", [("note_list", {})], DEMO),
        ("Add 8 and 4, then add 5 to that.", [calc("8 + 4"), calc("12 + 5")], DEMO),
        ("What is 12,000 divided by 3?", [calc("12000 / 3")], DEMO),
        ("What is 8% of 50?", [("percent_of", {"rate": 0.08, "amount": 50})], ["percent_of"]),
        ("Weather in Paris, please.", [("get_weather", {"city": "Paris, FR"})], ["get_weather"]),
        ("What's 5 Ampere over 4 m?", [("magnetic_field", {"current": 5, "radius": 4})], []),
        ("Find the GCD of 36 and 48.", [("math_gcd", {"a": 36, "b": 48})], ["math_gcd"]),
        ("Take 100 minus 36, then divide what you get by 4.", [calc("(100 - 36) / 4")], DEMO),
        ("Calculate 2400 minus 875.", [calc("2400-875")], DEMO),
    ],
    ids=[
        "one-expression",
        "number-words-around",
        "a-note-with-a-day",
        "a-read",
        "two-steps-done",
        "thousands",
        "a-percentage-as-a-fraction",
        "a-name-carried",
        "a-unit-capitalised",
        "an-abbreviation",
        "two-steps-as-one-expression",
        "a-dash-between-digits-is-a-minus",
    ],
)
def test_nothing_is_left_when_the_calls_carry_the_request(request_text, calls, offered):
    assert request_left(request_text, calls, offered) == []


@pytest.mark.parametrize(
    ("request_text", "calls", "offered", "left"),
    [
        (
            "Work out 1260 divided by 3 and then write the answer down as a note for me.",
            [calc("1260 / 3")],
            DEMO,
            ["step word", "subject note"],
        ),
        (
            "How many tiles is 14 rows of 23? Please keep the number in my notes too.",
            [calc("14 * 23")],
            DEMO,
            ["step word", "subject note"],
        ),
        (
            "First add 8 and 4, and after that multiply the total by 5.",
            [calc("8 + 4")],
            DEMO,
            ["number"],
        ),
        ("I spent 12 and 9. Double the total.", [calc("12 + 9")], DEMO, ["number"]),
        (
            "Resistance of a copper and aluminum wire, 5m long.",
            [("resistance", {"material": "copper", "length": 5})],
            ["resistance"],
            ["list item"],
        ),
        (
            "Weather in Paris and in London.",
            [("get_weather", {"city": "Paris"})],
            ["get_weather"],
            ["name"],
        ),
        (
            "北京和上海的天气怎么样？",
            [("get_weather", {"city": "北京"})],
            ["get_weather"],
            ["unread text"],
        ),
        (
            "Show the forecast for Oslo.",
            [("get_weather", {"city": "Oslo"})],
            ["get_weather", "get_forecast"],
            ["subject forecast"],
        ),
    ],
    ids=[
        "compound-then-note",
        "compound-too",
        "a-number-for-the-next-step",
        "a-number-word",
        "a-list-item",
        "a-second-name",
        "an-unspaced-script",
        "an-uncalled-tool's-subject",
    ],
)
def test_what_is_left_is_named_without_its_value(request_text, calls, offered, left):
    assert request_left(request_text, calls, offered) == left


def test_a_step_word_asks_for_one_call_more_and_a_called_subject_is_done():
    request = "Work out 1260 divided by 3 and then write the answer down as a note for me."
    done = [calc("1260 / 3"), ("note_add", {"text": "Rent share: 420"})]
    assert request_left(request, done, DEMO) == []


def test_names_count_only_beside_a_carried_one():
    """A capitalised word no call holds is often a unit or a title ("5 Ampere", "Body Mass
    Index"); it is left only where a call carried another name of the request."""
    request = "Get the BMI (Body Mass Index) of Ann and Bob."
    assert "name" in request_left(request, [("bmi", {"person": "Ann"})], ["bmi"])
    assert request_left("Body Mass Index for 70 kg", [("bmi", {"kg": 70})], ["bmi"]) == []


def test_a_step_is_met_by_one_call_only_if_it_carries_every_number_up_to_its_clause():
    """A step whose clause gives a number is met by a call that carries it with every
    number before it, each as often as written; a clause without a number, or a number
    the call holds fewer times than written, still asks for a call."""
    request = "Take 100 minus 36, then divide what you get by 4."
    assert request_left(request, [calc("100 - 36")], DEMO) == ["number", "step word"]
    assert request_left(request, [calc("100 - 36"), calc("64 / 4")], DEMO) == []
    assert request_left("Work out 1260 divided by 3, then save it.", [calc("1260 / 3")], DEMO) == [
        "step word"
    ]
    twice = "Evaluate 2x + 5 at x = 4. Then also at x = 2."
    evaluate = ("evaluate", {"function": "2x + 5", "x": 4})
    assert request_left(twice, [evaluate], ["evaluate"]) == ["step word", "step word"]
