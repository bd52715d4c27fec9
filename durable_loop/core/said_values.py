"""Whether a call's values were said: found in what the conversation holds (the person's
words, the system prompt, tool results), or written by the model from nowhere.

Shared by the router's grounding rule (digits only, ``core/router/protocol``) and the call
summaries the LLM activity returns (``ToolCallSummary.args_unsaid``, read by the
``refuse_unasked_call`` recovery), which leaves out the tools the person named
(:meth:`Heard.names_tool`): a value of a tool they asked for may come from knowledge ("more
than 5 players" is 6; a deck holds 26 red cards). Pure and deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from pydantic import JsonValue

DIGITS = re.compile(r"\d+")
DIGIT_GAP = re.compile(r"(?<=\d)[\s,.'_-](?=\d{3}(?!\d))")
"""Thousands separators: 12,000 and 12 000 are heard as 12000; a list such as
``[22,33,42]`` or ``10 20 30`` stays its numbers."""
UNSTATED_FORMATS = frozenset({"date", "date-time", "time", "duration"})
"""Values people rarely write as the call holds them ("tomorrow" becomes a date)."""
_WORD = re.compile(r"[a-z0-9]+")
STEM = 5
"""Letters of a word compared: "specializing" is heard in "specialization"."""
MIN_WORD = 4
"""Shorter words ("the", "of", "gas") are no evidence either way."""
_DATE = re.compile(r"\d{4}[-/]\d{1,2}[-/]\d{1,2}(?:[ T].*)?|\d{1,2}/\d{1,2}/\d{2,4}")
"""A date written as numbers: "January 18, 2021" legitimately becomes 2021-01-18."""
_UNIT_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty"
)
NUMBER_WORDS = {word: value for value, word in enumerate(_UNIT_WORDS.split())} | {
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
    "hundred": 100,
    "thousand": 1000,
    "dozen": 12,
    "twice": 2,
    "double": 2,
    "triple": 3,
}
"""Numbers people write as words: "three" is heard as 3."""
_NAME_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
MIN_NAME_WORD = 3
"""A tool name's words this long or longer may name it ("car" names ``car_rental``)."""
_GENERIC_WORDS = (
    "get set add new all api run use top find fetch search lookup look calculate compute "
    "check list show view display create make generate update delete remove retrieve query "
    "info information data details detail tool function service perform execute process "
    "handle manage convert estimate determine analyze analyse analysis result results value "
    "values item items record records send open read write single multiple"
)
GENERIC_TOOL_WORDS = frozenset(_GENERIC_WORDS.split())
"""Words of tool names that name no subject: "calculate" in a question does not ask for
``calculate_density``."""


def value_text(value: JsonValue) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, str | int | float):
        return str(value)
    return ""


def required_names(parameters: Mapping[str, object]) -> list[str]:
    raw = parameters.get("required")
    return [str(r) for r in raw] if isinstance(raw, list) else []


class Heard:
    """The conversation's text, indexed for :func:`unsaid_arguments`: ``texts`` is all it
    says, ``asked`` the person's own messages (a part of ``texts``)."""

    def __init__(self, texts: list[str], *, asked: list[str] | None = None) -> None:
        text = " ".join(DIGIT_GAP.sub("", t) for t in texts).lower()
        words = _WORD.findall(text)
        self.runs = set(DIGITS.findall(text))
        self.runs |= {str(NUMBER_WORDS[w]) for w in words if w in NUMBER_WORDS}
        self.stems = {w[:STEM] for w in words if not w.isdigit()}
        asked_words = _WORD.findall(" ".join(asked or []).lower())
        self.asked = {w[:n] for w in asked_words for n in (MIN_WORD, STEM)}

    def names_tool(self, tool: str, offered: Iterable[str] = ()) -> bool:
        """Whether the person's messages name ``tool``'s subject: a word of its name that
        no other ``offered`` tool's name holds, of :data:`MIN_NAME_WORD` letters or more
        and not one of :data:`GENERIC_TOOL_WORDS`, is one they used or begins like one of
        theirs (first :data:`MIN_WORD` or :data:`STEM` letters). "probability" names
        ``probabilities_calculate``, "car" ``car_rental``; "board game" names
        ``board_game_search`` but not ``card_game_search`` beside it, and "red card" no
        ``fetch_DNA_sequence``."""
        shared = {w for other in offered if other != tool for w in name_words(other)}
        return any(
            w[:STEM] in self.asked
            for w in name_words(tool)
            if len(w) >= MIN_NAME_WORD and w not in GENERIC_TOOL_WORDS and w not in shared
        )

    def says(self, value: JsonValue, schema: Mapping[str, object]) -> bool:
        """Whether ``value`` could come from what was heard: each of its digit runs was
        written whole (20 is not heard in 12,000), as digits, as a number word, or as the
        percentage of a fraction; a string without digits that has words of
        :data:`MIN_WORD` letters or more shares at least one (by its first :data:`STEM`
        letters). A text whose numbers were all heard is said whatever label it adds
        ("Rent share: 420" after a result of 420), and a text that shares a word is said
        whatever it adds (a note "Book a dentist appointment at 3 PM tomorrow" for "remind
        me to book a dentist appointment": the person's words, paraphrased). Dates written
        as numbers, values the schema lists (``enum``), booleans and objects are taken as
        said."""
        if "enum" in schema or isinstance(value, bool) or value is None:
            return True
        if isinstance(value, list):
            items = schema.get("items")
            item_schema = items if isinstance(items, Mapping) else {}
            return all(self.says(item, item_schema) for item in value)
        if isinstance(value, dict):
            return True
        if isinstance(value, int | float):
            return any(self._heard_digits(v) for v in number_forms(value))
        if _DATE.fullmatch(value.strip()):
            return True
        words = [w for w in _WORD.findall(value.lower()) if len(w) >= MIN_WORD and not w.isdigit()]
        shares = any(w[:STEM] in self.stems for w in words)
        if DIGITS.search(value):
            return shares or self._heard_digits(value)
        return not words or shares

    def _heard_digits(self, value: JsonValue) -> bool:
        written = DIGIT_GAP.sub("", value_text(value))
        return set(DIGITS.findall(written)) <= self.runs


def name_words(tool: str) -> list[str]:
    return [w.lower() for w in _NAME_WORD.findall(tool)]


def number_forms(value: int | float) -> list[int | float]:
    """A number as written, and a fraction below 1 as the percentage it came from (8% is
    sent as 0.08)."""
    if isinstance(value, float) and 0 < abs(value) < 1:
        return [value, round(value * 100, 6)]
    return [value]


def unsaid_arguments(
    args: Mapping[str, JsonValue],
    parameters: Mapping[str, object],
    heard: Heard,
    *,
    tool: str | None = None,
    offered: Iterable[str] = (),
) -> list[str]:
    """Required arguments whose value the conversation never gave: digits nobody wrote, or
    a text none of whose words anybody used (``car_type: ["sedan", "truck"]`` for "find
    lawyers in New York"). Date and time formats are left out, and so is every argument of
    a ``tool`` the person named among the ``offered`` ones (:meth:`Heard.names_tool`)."""
    if tool is not None and heard.names_tool(tool, offered):
        return []
    properties = parameters.get("properties")
    props = properties if isinstance(properties, Mapping) else {}
    unsaid: list[str] = []
    for name in required_names(parameters):
        raw = props.get(name)
        schema: Mapping[str, object] = raw if isinstance(raw, Mapping) else {}
        if schema.get("format") in UNSTATED_FORMATS or name not in args:
            continue
        if not heard.says(args[name], schema):
            unsaid.append(name)
    return unsaid
