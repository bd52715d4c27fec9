"""Is a final reply an answer? A reply that is only a tool call written as text is not.

Small models, once tools are withdrawn (or after the repeated-call guard answered a
repeat), often write the call they would have made instead of answering:
``{"name": "calculate", "arguments": {...}}``, the same in a fence or ``<tool_call>``
tags, or ``calculate("37 * 43")``. Such text must never reach the user as a completed
reply. These checks are pure; :func:`answer_check` is the one the loop runs on every
untyped final reply (see ``workflows/reply_guard``), with ``patched`` its
``workflow.patched``: each check arrived behind its own patch.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping

from durable_loop.core.errors import CodedError, ErrorCode
from durable_loop.core.transforms.text_calls import (
    TextCall,
    parse_call_shaped,
    parse_json_calls,
    parse_tagged_calls,
)

TEXT_CALL_PATCH_ID = "reply-not-a-text-call"
NO_WORDS_PATCH_ID = "reply-without-words"
CUT_OFF_PATCH_ID = "reply-cut-off-call"
UNKNOWN_CALL_PATCH_ID = "reply-unknown-text-call"

LEFTOVER = re.compile(r"^[\s`.;:,]*$")
"""What may surround a text call for the reply to count as nothing but that call."""
FUNCTION_CALL = re.compile(
    r"^[\s`]*(?:python|json)?\s*([A-Za-z_][\w.-]*)\s*\((.*)\)[\s`.;]*$", re.DOTALL
)

NO_RESULTS = "(no tool returned a result)"


def _only_calls(calls: list[TextCall], leftover: str) -> bool:
    return bool(calls) and LEFTOVER.match(leftover) is not None


def text_call_of(text: str | None, known_tools: set[str]) -> TextCall | None:
    """The first call when ``text`` is nothing but tool calls of known tools written as
    text (JSON, fenced JSON, ``<tool_call>`` tags, or ``name(...)``); else None.

    Only known tools count: a JSON answer the user asked for is not a call.
    """
    if not text or not text.strip() or not known_tools:
        return None
    tagged, rest = parse_tagged_calls(text)
    if _only_calls(tagged, rest) and all(c.name in known_tools for c in tagged):
        return tagged[0]
    as_json, rest = parse_json_calls(text.rstrip().rstrip(".;,"), sorted(known_tools))
    if _only_calls(as_json, rest):
        return as_json[0]
    match = FUNCTION_CALL.match(text)
    if match is not None and match.group(1) in known_tools:
        return TextCall(name=match.group(1), arguments=match.group(2).strip())
    return None


OPENERS = "{[<`"
CUT_OFF_CALL = re.compile(r'^\s*(?:```[a-zA-Z]*\s*)?(?:<tool_call>\s*)?\{\s*"name"\s*:\s*"([^"]+)"')


def cut_off_call_of(text: str | None, known_tools: set[str]) -> str | None:
    """The tool a reply starts to call as JSON text (``{"name": "state_patch", "arguments":
    {...`` cut off by the token limit, so it never parses as a call): its name, when it
    is a known tool and the reply is no complete JSON value; else None."""
    match = CUT_OFF_CALL.match(text or "")
    if match is None or match.group(1) not in known_tools:
        return None
    try:
        json.loads(text or "")
    except ValueError:
        return match.group(1)
    return None


def _final_reply(recovered: bool) -> str:
    return "the final reply after a finalization request" if recovered else "the final reply"


def cut_off_call_message(name: str, recovered: bool) -> str:
    return (
        f"{_final_reply(recovered)} was a call of {name} written as JSON text and cut off, not "
        "an answer, so it was not returned; the recovery finalize_text_call_reply asks once "
        "more for an answer"
    )


def has_no_words(text: str | None) -> bool:
    """A reply that opens a structure (``{``, ``[``, ``<``, a fence) and holds not a single
    letter or digit: a call cut off as it started, not an answer. A blank reply is
    EMPTY_FINAL's business; an emoji is a reply."""
    stripped = (text or "").strip()
    return stripped[:1] in tuple(OPENERS) and not any(ch.isalnum() for ch in stripped)


def no_words_message(text: str, recovered: bool) -> str:
    return (
        f"{_final_reply(recovered)} held no words ({text.strip()[:20]!r}), not an answer, so it "
        "was not returned; the recovery finalize_text_call_reply asks once more for an answer"
    )


def referred_tool(text: str | None, tools: list[str], called: set[str]) -> str | None:
    """A tool the reply tells the user to use instead of calling it: named in code form
    (`` `note_list` ``, ``note_list()``, ``note_list function``/``tool``) and not called in
    this message. Plain prose words ("calculate") do not count."""
    if not text:
        return None
    for name in tools:
        if name in called:
            continue
        quoted = re.escape(name)
        pattern = rf"`{quoted}(?:\(\))?`|\b{quoted}\(\)|\b{quoted}\s+(?:function|tool|command)\b"
        if re.search(pattern, text):
            return name
    return None


NEGATIONS = frozenset({"not", "don't", "dont", "never", "without", "no", "avoid", "instead"})


def requested_tool(request: str, tools: list[str], called: set[str]) -> str | None:
    """The first offered tool the person's message names (as a whole word) that was not
    called in this message, unless its clause negates it ("do not use state_patch",
    "without note_add or note_list"): a missed request is safer than a forced call."""
    found: list[tuple[int, str]] = []
    for name in tools:
        if name in called:
            continue
        for match in re.finditer(rf"(?<![\w-]){re.escape(name)}(?![\w-])", request):
            clause = re.split(r"[.!?;\n]", request[: match.start()])[-1]
            if not negates_anything(clause):
                found.append((match.start(), name))
                break
    return min(found)[1] if found else None


def negates_anything(request: str) -> bool:
    """The message holds a negation anywhere ("and don't save it"): a tool it does not
    name cannot be told apart from the one it rules out."""
    return bool(NEGATIONS.intersection(re.findall(r"[\w']+", request.lower())))


def results_digest(
    results: list[tuple[str, str]], limit: int = 600, purposes: Mapping[str, str] | None = None
) -> str:
    """One line per recorded result, ``- name (purpose): preview``, newest kept within
    ``limit``. ``purposes`` maps a tool to what it does (``core/tools.tool_purpose``): shown
    only ``note_add: {"text": "email Anna the slides"}``, the local model took the saved note
    for the task and answered how to send the email (docs/evals.md)."""
    purposes = purposes or {}
    lines = [f"- {_labelled(name, purposes)}: {' '.join(text.split())}" for name, text in results]
    while lines and sum(len(line) + 1 for line in lines) > limit and len(lines) > 1:
        lines.pop(0)
    if not lines:
        return NO_RESULTS
    return "\n".join(line if len(line) <= limit else line[: limit - 1] + "…" for line in lines)


def _labelled(tool: str, purposes: Mapping[str, str]) -> str:
    purpose = purposes.get(tool)
    return f"{tool} ({purpose})" if purpose else tool


def unknown_call_message(call: TextCall, recovered: bool) -> str:
    return (
        f"{_final_reply(recovered)} was a call of {call.name!r}, a tool that does not exist, "
        "written as text: not an answer, so it was not returned; the recovery "
        "finalize_text_call_reply asks once more for an answer"
    )


def not_an_answer_message(call: TextCall, recovered: bool) -> str:
    return (
        f"{_final_reply(recovered)} was a call of {call.name!r} written as text, not an "
        "answer, so it was not returned. While tools are offered the text-call transforms "
        "(presets content_tag_tool_call_fallback, json_tool_call_fallback) run such calls; "
        "after the tools were withdrawn the recovery finalize_text_call_reply asks once more "
        "for an answer"
    )


def answer_check(
    text: str | None,
    registered: set[str] | frozenset[str],
    patched: Callable[[str], bool],
    *,
    recovered: bool,
) -> tuple[CodedError | None, bool]:
    """(REPLY_NOT_AN_ANSWER when ``text`` is no answer, whether it is plain text).

    A reply in the exact shape of a call of a tool that was not offered is no answer either
    (``reply-unknown-text-call``): small models "call" ``greet`` or ``thank_you`` as JSON
    text when a greeting needs no tool.

    Plain text (no call written as text) may still be judged by the ``answer`` recoveries;
    a text call on a run from before ``reply-not-a-text-call`` is neither. ``recovered``:
    the finalization request was already sent (the message says so)."""
    call = text_call_of(text, set(registered))
    if call is None and has_no_words(text) and patched(NO_WORDS_PATCH_ID):
        return _not_an_answer(no_words_message(text or "", recovered)), False
    cut = None if call is not None else cut_off_call_of(text, set(registered))
    if cut is not None and patched(CUT_OFF_PATCH_ID):
        return _not_an_answer(cut_off_call_message(cut, recovered)), False
    if call is None:
        unknown = parse_call_shaped(text or "")
        if unknown is not None and patched(UNKNOWN_CALL_PATCH_ID):
            return _not_an_answer(unknown_call_message(unknown, recovered)), False
        return None, True
    if not patched(TEXT_CALL_PATCH_ID):
        return None, False
    return _not_an_answer(not_an_answer_message(call, recovered)), False


def _not_an_answer(message: str) -> CodedError:
    return CodedError(code=ErrorCode.REPLY_NOT_AN_ANSWER, message=message)
