"""What a person's request still asks for after the calls made for it: a value it gives
that no call carried, a word that orders steps ("then", "too"), or the subject of an
offered tool no call used.

Read by the ``finalize_when_done`` recovery (through ``LlmTurnOutput.request_left``): a
request with nothing left after successful calls gets the answer at once, not another
turn with tools in which the local model repeats its call. It errs towards "something is
left", which only keeps the tools one more turn (as before), never towards losing a step.
Labels name no value the person gave. Pure and deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from pydantic import JsonValue

from durable_loop.core.said_values import (
    DIGIT_GAP,
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
"for each of". Each asks for one call more than one."""
_WORD = re.compile(r"[A-Za-z0-9]+")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;\n]\s*|[\"'(\[]\s*)$")
_QUOTED = re.compile(r"\"([^\"]{1,200})\"|'([^']{2,200})'(?![a-z])")
_LIST = re.compile(r"\b[A-Za-z]+(?:,\s*[A-Za-z]+)*,?\s+(?:and|or)\s+[A-Za-z]+\b")
"""Single words joined by commas and a last "and"/"or": "navy, purple and maroon". A comma
alone joins clauses as often as items ("a dentist appointment, save it as a note")."""
_JOINS = re.compile(r",\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+")
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
"""Scripts written without spaces between words (Chinese, Japanese, Korean): not read."""
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
    carried_runs, carried_stems = _carried(made)
    text = DIGIT_GAP.sub("", request)
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
    steps = sum(word in STEP_WORDS for word in lowered)
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


def _carried(calls: list[CallMade]) -> tuple[set[str], set[str]]:
    """The digit runs and word stems the calls' argument values hold."""
    runs: set[str] = set()
    stems: set[str] = set()
    for _, args in calls:
        for value in (leaf for item in args.values() for leaf in _leaves(item)):
            if isinstance(value, bool):
                continue
            if isinstance(value, int | float):
                for form in number_forms(value):
                    runs |= set(DIGITS.findall(value_text(form)))
                continue
            written = DIGIT_GAP.sub("", value)
            runs |= set(DIGITS.findall(written))
            for word in _WORD.findall(written.lower()):
                stems.add(word[:STEM])
                if word in NUMBER_WORDS:
                    runs.add(str(NUMBER_WORDS[word]))
    return runs, stems


def _leaves(value: JsonValue) -> Iterable[str | int | float | bool]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    elif value is not None:
        yield value
