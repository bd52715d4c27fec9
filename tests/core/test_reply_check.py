"""Which final replies are tool calls written as text (pure checks)."""

from __future__ import annotations

import pytest

from durable_loop.core.reply_check import (
    UNKNOWN_CALL_PATCH_ID,
    answer_check,
    cut_off_call_of,
    has_no_words,
    referred_tool,
    requested_tool,
    results_digest,
    text_call_of,
)

KNOWN = {"calculate", "note_list"}


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "calculate", "arguments": "{\\"expression\\":\\"37 * 43\\"}"}',
        '```json\n{"name": "calculate", "arguments": {"expression": "37 * 43"}}\n```',
        '<tool_call>\n{"name": "calculate", "arguments": {"expression": "37*43"}}\n</tool_call>',
        'calculate("37 * 43")',
        "`calculate(expression='37 * 43')`",
        '{"name": "calculate", "parameters": {"expression": "1+1"}}.',
    ],
)
def test_a_call_of_a_known_tool_written_as_text_is_not_an_answer(text: str) -> None:
    call = text_call_of(text, KNOWN)
    assert call is not None and call.name == "calculate"


@pytest.mark.parametrize(
    "text",
    [
        "37 times 43 is 1591.",
        '{"name": "Ada", "arguments": "none"}',
        'The call was {"name": "calculate", "arguments": {"expression": "1+1"}} and gave 2.',
        "You can use the note_list function to list notes.",
        "print(1591)",
        "",
        None,
    ],
)
def test_answers_and_calls_of_unknown_tools_pass(text: str | None) -> None:
    assert text_call_of(text, KNOWN) is None


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "greet", "arguments": {"message": "Good morning!"}}',
        '{"name": "thank_you", "arguments": {}}',
        '```json\n{"name": "identify", "parameters": {"type": "robot"}}\n```',
        '{{"name": "hello", "arguments": {}}}',
        '<tool_call>\n{"name": "state_set", "arguments": {"path": "/a"}}\n</tool_call>',
    ],
)
def test_a_call_shaped_reply_naming_no_tool_is_not_an_answer(text: str) -> None:
    asked: list[str] = []
    failure, plain = answer_check(text, KNOWN, lambda p: asked.append(p) or True, recovered=False)
    assert failure is not None and failure.code == "REPLY_NOT_AN_ANSWER" and not plain
    assert "does not exist" in failure.message and asked == [UNKNOWN_CALL_PATCH_ID]
    before, plain = answer_check(text, KNOWN, lambda p: False, recovered=False)
    assert before is None and plain


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "Ada", "age": 36}',
        '{"name": "Ada", "arguments": "none"}',
        '{"name": "first name", "arguments": {}}',
        '[{"name": "a", "arguments": {}}, {"name": "b", "arguments": {}}]',
        'Here it is: {"name": "greet", "arguments": {}}',
        "Good morning! How can I help?",
    ],
)
def test_json_answers_and_prose_are_not_call_shaped(text: str) -> None:
    failure, _ = answer_check(text, KNOWN, lambda p: True, recovered=False)
    assert failure is None


def test_nothing_is_a_call_without_known_tools() -> None:
    assert text_call_of('calculate("1")', set()) is None


def test_results_digest_keeps_the_newest_lines_within_the_limit() -> None:
    results = [("calculate", '{"ok": true, "data": 1591}'), ("note_list", "x" * 50)]
    assert results_digest(results) == '- calculate: {"ok": true, "data": 1591}\n- note_list: ' + (
        "x" * 50
    )
    assert results_digest(results, limit=40) == "- note_list: " + "x" * 26 + "…"
    assert results_digest([]) == "(no tool returned a result)"


def test_results_digest_names_what_a_tool_does_where_it_is_known() -> None:
    results = [("note_add", '{"id": 1}'), ("calculate", "6")]
    purposes = {"note_add": "Save a short note for later", "calculate": ""}
    assert results_digest(results, purposes=purposes) == (
        '- note_add (Save a short note for later): {"id": 1}\n- calculate: 6'
    )


@pytest.mark.parametrize(
    "text",
    [
        "To check the number of notes you have saved, you can use the `note_list` function.",
        "Call note_list() to see them.",
        "Use the note_list tool for that.",
    ],
)
def test_a_reply_that_tells_the_user_to_use_a_tool_refers_to_it(text: str) -> None:
    assert referred_tool(text, ["calculate", "note_list"], set()) == "note_list"


def test_prose_words_and_tools_already_called_are_no_referral() -> None:
    tools = ["calculate", "note_list"]
    assert referred_tool("I can calculate that: 4.", tools, set()) is None
    assert referred_tool("I used the `note_list` function: 2 notes.", tools, {"note_list"}) is None
    assert referred_tool(None, tools, set()) is None


def test_a_reply_that_opens_a_structure_without_words_has_no_words():
    assert has_no_words("{\n") and has_no_words("```") and has_no_words(" [ ")
    assert not has_no_words("") and not has_no_words("   ") and not has_no_words("👍")
    assert not has_no_words('{"answer": 1}') and not has_no_words("It is 80.")


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ('{"name": "state_patch", "arguments": {"ops":[{"op":"replace"', "state_patch"),
        ('```json\n{"name": "state_patch", "arguments": {', "state_patch"),
        ('<tool_call>\n{"name": "state_patch", "arguments"', "state_patch"),
        ('{"name": "state_set", "arguments": {', None),  # not a known tool
        ('{"name": "state_patch", "arguments": {}}', None),  # complete: text_call_of's
        ('The tool is {"name": "state_patch"', None),  # prose first
        (None, None),
    ],
)
def test_a_json_call_cut_off_by_the_token_limit_is_recognised(text, name) -> None:
    assert cut_off_call_of(text, {"state_patch"}) == name


@pytest.mark.parametrize(
    ("request_text", "called", "expected"),
    [
        ("Read it with state_get and set /a with state_patch.", set(), "state_get"),
        ("Read it with state_get and set /a with state_patch.", {"state_get"}, "state_patch"),
        ("Set /a with state_patch, then read it with state_get.", set(), "state_patch"),
        ("Do not use state_patch. Read it with state_get.", set(), "state_get"),
        ("Without state_patch or state_get, say hi.", set(), None),
        ("Use the state-patch tool or state_patcher.", set(), None),
        ("Hi! How are you?", set(), None),
        ("", set(), None),
    ],
)
def test_a_requested_tool_is_one_the_person_names_and_the_model_did_not_call(
    request_text, called, expected
):
    tools = ["state_get", "state_patch"]
    assert requested_tool(request_text, tools, called) == expected
