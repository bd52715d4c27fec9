"""Which required values a conversation gave: the rule behind ``args_unsaid``."""

from __future__ import annotations

from typing import Any

import pytest

from durable_loop.core.said_values import Heard, unsaid_arguments

CAR_RENTAL: dict[str, Any] = {
    "type": "object",
    "properties": {
        "location": {"type": "string"},
        "car_type": {"type": "array", "items": {"type": "string"}},
        "fuel_type": {"type": "string"},
    },
    "required": ["location", "car_type"],
}
LAWYERS = "Find lawyers specializing in criminal law near me in New York."


def unsaid(args: dict[str, Any], parameters: dict[str, Any], *said: str) -> list[str]:
    return unsaid_arguments(args, parameters, Heard(list(said)))


def test_a_text_none_of_whose_words_anybody_used_is_unsaid():
    args = {"location": "New York", "car_type": ["sedan", "truck"], "fuel_type": "diesel"}
    assert unsaid(args, CAR_RENTAL, LAWYERS) == ["car_type"]


@pytest.mark.parametrize(
    ("value", "missing"),
    [
        ([22, 33, 42], []),
        ([10, 20, 30], []),
        ([22, 34], ["scores"]),
        ([2233], ["scores"]),
        ([1234567], []),
    ],
)
def test_numbers_written_as_a_list_are_each_said(value: Any, missing: list[str]):
    """Only a separator before three digits joins digit runs: a list of numbers written
    with commas or spaces is its numbers, not one number (BFCL simple_python_119)."""
    parameters = {"properties": {"scores": {"type": "array"}}, "required": ["scores"]}
    said = "Sample1: [22,33,42] and 10 20 30; a population of 1,234,567."
    assert unsaid({"scores": value}, parameters, said) == missing


@pytest.mark.parametrize(
    ("text", "missing"),
    [
        ("Book a dentist appointment at 3 PM tomorrow.", []),
        ("Dentist: 3 PM", []),
        ("Reading 42", ["text"]),
        ("42", ["text"]),
    ],
)
def test_a_text_that_shares_a_word_is_said_whatever_numbers_it_adds(text: str, missing: list[str]):
    """A note in the person's words with a time of the model's own is their request,
    paraphrased; a text with neither their words nor their numbers is not."""
    parameters = {"properties": {"text": {"type": "string"}}, "required": ["text"]}
    said = "Remind me to book a dentist appointment, save it as a note."
    assert unsaid({"text": text}, parameters, said) == missing


def test_one_shared_word_is_enough_and_words_match_by_their_stem():
    parameters = {
        "properties": {"specialization": {"type": "array", "items": {"type": "string"}}},
        "required": ["specialization"],
    }
    assert unsaid({"specialization": ["criminal defence"]}, parameters, LAWYERS) == []
    assert unsaid({"specialization": ["specialized"]}, parameters, LAWYERS) == []
    assert unsaid({"specialization": ["tax"]}, parameters, LAWYERS) == []  # too short to tell


@pytest.mark.parametrize(
    ("value", "missing"),
    [(12000, []), ("12,000 miles", []), (20, ["distance"]), (0.5, ["distance"]), (10.0, [])],
)
def test_numbers_are_said_when_their_digit_runs_were_written(value: Any, missing: list[str]):
    parameters = {"properties": {"distance": {"type": "number"}}, "required": ["distance"]}
    said = "A car that travels 12 000 miles a year; the radius is 10."
    assert unsaid({"distance": value}, parameters, said) == missing


@pytest.mark.parametrize(
    ("value", "missing"),
    [
        (0.04, []),
        (0.035, []),
        (0.5, ["rate"]),
        ("2021-01-18", []),
        ("01/18/2021", []),
        (3, []),
        (12, []),
        (13, ["rate"]),
    ],
)
def test_percentages_dates_and_number_words_count_as_said(value: Any, missing: list[str]):
    parameters = {"properties": {"rate": {}}, "required": ["rate"]}
    said = "On January 18, 2021, at 4% and then 3.5%, three times a dozen."
    assert unsaid({"rate": value}, parameters, said) == missing


def test_values_from_a_tool_result_or_the_system_prompt_are_said():
    parameters = {"properties": {"text": {"type": "string"}}, "required": ["text"]}
    request = "Work out 1260 divided by 3 and then write the answer down as a note."
    result = '{"data": {"result": 420}, "ok": true}'
    assert unsaid({"text": "1260 / 3 = 420"}, parameters, request, result) == []
    assert unsaid({"text": "1260 / 3 = 421"}, parameters, request, result) == ["text"]
    assert unsaid({"text": "Rent share: 420"}, parameters, request, result) == []
    assert unsaid({"text": "Ring Dunmore"}, parameters, "The plumber is called Dunmore.") == []


def test_listed_dated_optional_and_structured_values_are_taken_as_said():
    parameters = {
        "properties": {
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "when": {"type": "string", "format": "date"},
            "flags": {"type": "object"},
            "strict": {"type": "boolean"},
            "colours": {"type": "array", "items": {"type": "string", "enum": ["crimson"]}},
            "note": {"type": "string"},
        },
        "required": ["unit", "when", "flags", "strict", "colours"],
    }
    args = {
        "unit": "fahrenheit",
        "when": "2026-11-28",
        "flags": {"invented": "zebra"},
        "strict": True,
        "colours": ["crimson"],
        "note": "an optional value nobody gave",
    }
    assert unsaid(args, parameters, "What is it like out there?") == []


def test_a_required_argument_the_call_leaves_out_is_not_reported():
    assert unsaid({"location": "New York"}, CAR_RENTAL, LAWYERS) == []


def heard_asking(question: str) -> Heard:
    return Heard([question], asked=[question])


@pytest.mark.parametrize(
    ("question", "tool"),
    [
        (
            "What is the probability of drawing a red card from a deck of 52?",
            "probabilities_calculate_single",
        ),
        ("Find a board game for more than 5 players.", "board_game_search"),
        ("Find a board game for more than 5 players.", "boardGameSearch"),
        ("Which cards are in season?", "card_game_search"),
    ],
)
def test_a_tool_whose_subject_the_person_named_has_no_unsaid_values(question, tool):
    heard = heard_asking(question)
    assert heard.names_tool(tool)
    parameters = {"properties": {"n": {"type": "integer"}}, "required": ["n"]}
    assert unsaid_arguments({"n": 26}, parameters, heard, tool=tool) == []


@pytest.mark.parametrize(
    ("question", "tool"),
    [
        (LAWYERS, "car_rental"),
        ("Calculate the area of a circle with radius 5.", "plot_sine_wave"),
        ("Calculate the area of a circle with radius 5.", "calculate_density"),
        ("What is the probability of drawing a king from a deck of cards?", "fetch_DNA_sequence"),
        ("Find the details of a gene mutation.", "find_details"),
    ],
)
def test_generic_or_unused_words_of_a_tool_name_name_nothing(question, tool):
    heard = heard_asking(question)
    assert not heard.names_tool(tool)
    args = {"location": "New York", "car_type": ["sedan"]}
    assert "car_type" in unsaid_arguments(args, CAR_RENTAL, heard, tool=tool)


def test_only_the_persons_own_messages_name_a_tool():
    result = "Car rental is available at the airport."
    heard = Heard([LAWYERS, result], asked=[LAWYERS])
    assert not heard.names_tool("car_rental")
    assert Heard([LAWYERS, result], asked=[LAWYERS, result]).names_tool("car_rental")


def test_a_short_word_names_a_tool_only_when_said_whole():
    assert heard_asking("Rent me a car in Boston.").names_tool("car_rental")
    assert not heard_asking("Find a carpenter in Boston.").names_tool("car_rental")
    assert not heard_asking("Get me the weather and add a note.").names_tool("get_add")


def test_a_word_other_offered_tools_share_names_none_of_them():
    heard = heard_asking("Find a board game for more than 5 players and a trivia game.")
    offered = ["card_game_search", "board_game_search", "trivia_game_search"]
    assert heard.names_tool("board_game_search", offered)
    assert heard.names_tool("trivia_game_search", offered)
    assert not heard.names_tool("card_game_search", offered)
    assert heard.names_tool("card_game_search")  # alone, "game" names it
    parameters = {"properties": {"theme": {"type": "string"}}, "required": ["theme"]}
    args = {"theme": "science fiction"}
    assert unsaid_arguments(args, parameters, heard, tool="card_game_search", offered=offered) == [
        "theme"
    ]
