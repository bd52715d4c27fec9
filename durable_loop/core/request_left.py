"""What a person's request still asks for after the calls made for it: a value it gives
that no call carried, a word that orders steps ("then", "too") with no call of its own
(unless one call carried its step's numbers with every number before them), or the
subject of an offered tool no call used.

Read by the ``finalize_when_done`` recovery (through ``LlmTurnOutput.request_left``): a
request with nothing left after successful calls gets the answer at once, not another
turn with tools in which the local model repeats its call. It errs towards "something is
left", which only keeps the tools one more turn (as before), never towards losing a step.
``continue_after_repeat`` reads its value labels after a repeat.
Labels name no value the person gave. Pure and deterministic.
"""

from __future__ import annotations

import operator
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from functools import reduce

from pydantic import JsonValue

from durable_loop.core.said_values import (
    DIGITS,
    GENERIC_TOOL_WORDS,
    MIN_NAME_WORD,
    MIN_WORD,
    NUMBER_WORDS,
    STEM,
    name_words,
    number_forms,
    value_text,
)

STEP_WORDS = frozenset(
    {
        "then",
        "afterwards",
        "also",
        "too",
        "once",
        "finally",
        "second",
        "third",
        "both",
        "each",
        "another",
        "again",
        "besides",
        "additionally",
        "respectively",
    }
)
"""Words that order or add steps: "work it out, then save it", "keep it in my notes too",
"for each of". Each asks for one call more than one (see ``_steps_not_carried``)."""
_WORD = re.compile(r"[A-Za-z0-9]+")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;\n]\s*|[\"'(\[]\s*)$")
_QUOTED = re.compile(r"\"([^\"]{1,200})\"|'([^']{2,200})'(?![a-z])")
_LIST = re.compile(r"\b[A-Za-z]+(?:,\s*[A-Za-z]+)*,?\s+(?:and|or)\s+[A-Za-z]+\b")
"""Single words joined by commas and a last "and"/"or": "navy, purple and maroon". A comma
alone joins clauses as often as items ("a dentist appointment, save it as a note")."""
_JOINS = re.compile(r",\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+")
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
"""Scripts written without spaces between words (Chinese, Japanese, Korean): not read."""
_SENTENCES = re.compile(r"[.!?;\n]+(?:\s+|$)")
"""Where a sentence ends; a point between digits ("2.5") is not an end."""
_GAP = re.compile(r"(?<=\d)[\s,.'_](?=\d{3}(?!\d))")
"""Thousands separators, as said_values' DIGIT_GAP less the dash: between digits of a
calculation it is a minus ("2400-875")."""
COURTESY_WORDS = frozenset({"please", "thanks", "thank", "kindly"})
CallMade = tuple[str, Mapping[str, JsonValue]]
"""A call of this request: the tool's name and its arguments."""


def request_left(request: str, calls: Iterable[CallMade], offered: Iterable[str]) -> list[str]:
    """Labels for what ``request`` still asks for after ``calls``: ``number``, ``name`` (a
    capitalised or quoted word), ``list item``, ``step word`` (one per call the request's
    step words still ask for), ``unread text``, ``subject <word of a tool's name>``; empty
    when the calls carry everything it gives. Duplicate labels are kept, one per item."""
    made = list(calls)
    offered = list(offered)
    tool_stems = {w[:STEM] for tool in offered for w in name_words(tool)}
    held = [_call_runs(args) for _, args in made]
    carried_runs = {run for runs in held for run in runs}
    carried_stems = _carried_stems(made)
    text = _GAP.sub("", request)
    lowered = [w.lower() for w in _WORD.findall(text)]
    left: list[str] = []
    for run in DIGITS.findall(text):
        if run not in carried_runs:
            left.append("number")
    for word in lowered:
        if word in NUMBER_WORDS and str(NUMBER_WORDS[word]) not in carried_runs:
            left.append("number")
    named = [w for w in _names(text) if len(w) > 1 and w[:STEM] not in tool_stems]
    if any(w[:STEM] in carried_stems for w in named):
        left += ["name" for w in named if w[:STEM] not in carried_stems]
    left += ["list item" for _ in _list_items_left(text, carried_stems)]
    if _UNSPACED.search(request):
        left.append("unread text")
    steps = len(_steps_not_carried(text, held))
    if steps:
        left += ["step word"] * max(0, steps + 1 - len(made))
    asked = {w[:n] for w in lowered for n in (MIN_WORD, STEM)}
    used = {w[:STEM] for name, _ in made for w in name_words(name)}
    subjects = {
        w
        for tool in offered
        for w in name_words(tool)
        if len(w) >= MIN_NAME_WORD and w not in GENERIC_TOOL_WORDS and w[:STEM] in asked
    }
    left += [f"subject {w}" for w in sorted(subjects) if w[:STEM] not in used]
    return left


def _steps_not_carried(text: str, held: list[Counter[str]]) -> list[str]:
    """The step words whose step still asks for a call of its own, given the digit runs
    each call carried (``held``). A step whose clause (its words up to the next step word
    or the end of its sentence) gives a number is met when one call carries every number
    the request gives up to there, each as often as written: "100 minus 36, then divide by
    4" as one expression. A clause without a number ("then save it") always asks for a
    call."""
    words = [(m.group().lower(), m.start()) for m in _WORD.finditer(text)]
    stops = [m.start() for m in _SENTENCES.finditer(text)]
    given: Counter[str] = Counter()
    counted = 0
    left: list[str] = []
    for index, (word, at) in enumerate(words):
        if word not in STEP_WORDS:
            continue
        stop = min([s for s in stops if s > at], default=len(text))
        end = index + 1
        while end < len(words) and words[end][1] < stop and words[end][0] not in STEP_WORDS:
            end += 1
        given += _runs([w for w, _ in words[counted:end]])
        counted = end
        clause = _runs([w for w, _ in words[index + 1 : end]])
        if not clause or not any(given <= runs for runs in held):
            left.append(word)
    return left


def _runs(words: list[str]) -> Counter[str]:
    """The digit runs words give, each as often as given: digits and number words."""
    runs = Counter(run for word in words for run in DIGITS.findall(word))
    return runs + Counter(str(NUMBER_WORDS[w]) for w in words if w in NUMBER_WORDS)


def _call_runs(args: Mapping[str, JsonValue]) -> Counter[str]:
    """The digit runs one call's argument values carry, each as often as carried."""
    runs: Counter[str] = Counter()
    for value in _values(args):
        if isinstance(value, bool):
            continue
        if isinstance(value, int | float):
            forms = [Counter(DIGITS.findall(value_text(f))) for f in number_forms(value)]
            runs += reduce(operator.or_, forms)
        else:
            runs += _runs(_WORD.findall(_GAP.sub("", value).lower()))
    return runs


def _list_items_left(text: str, carried: set[str]) -> list[str]:
    """Items of a list ("copper and aluminum", "navy, purple and maroon") no call carried,
    where a call carried another item of the same list."""
    left: list[str] = []
    for match in _LIST.finditer(text):
        items = [w.lower() for w in _JOINS.split(match.group())]
        items = [w for w in items if len(w) >= MIN_NAME_WORD and w not in COURTESY_WORDS]
        held = [w[:STEM] in carried for w in items]
        if any(held) and not all(held):
            left += [w for w, h in zip(items, held, strict=True) if not h]
    return left


def _names(text: str) -> list[str]:
    """Words the person wrote capitalised mid-sentence ("Paris", "SK123"), and the words
    of quoted text."""
    found: list[str] = []
    for match in _WORD.finditer(text):
        word = match.group()
        if word == "I" or not word[0].isupper() or word.isdigit():
            continue
        if _SENTENCE_START.search(text[: match.start()]):
            continue
        found.append(word.lower())
    for quoted in _QUOTED.finditer(text):
        inner = quoted.group(1) or quoted.group(2) or ""
        found += [w.lower() for w in _WORD.findall(inner) if len(w) >= MIN_WORD]
    return found


def _carried_stems(calls: list[CallMade]) -> set[str]:
    """The word stems the calls' string argument values hold."""
    return {
        word[:STEM]
        for _, args in calls
        for value in _values(args)
        if isinstance(value, str)
        for word in _WORD.findall(_GAP.sub("", value).lower())
    }


def _values(args: Mapping[str, JsonValue]) -> Iterable[str | int | float | bool]:
    return (leaf for item in args.values() for leaf in _leaves(item))


def _leaves(value: JsonValue) -> Iterable[str | int | float | bool]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    elif value is not None:
        yield value
