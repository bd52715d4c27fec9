"""The built-in judges, pure: what each decides from the reply and the message's facts,
and where each asks its patch."""

from __future__ import annotations

import pytest

from durable_loop.core.errors import CodedError, ErrorCode
from durable_loop.core.recoveries import Event, MessageFacts
from durable_loop.core.recoveries import call_referred_tool as referred
from durable_loop.core.recoveries import call_requested_tool as requested
from durable_loop.core.recoveries import continue_after_repeat as carry_on
from durable_loop.core.recoveries import finalize_after_repeat as after_repeat
from durable_loop.core.recoveries import finalize_text_call_reply as finalize
from durable_loop.core.recoveries import finalize_when_done as when_done
from durable_loop.core.recoveries import fix_empty_final as empty
from durable_loop.core.recoveries import refuse_unasked_call as unasked
from durable_loop.core.recoveries import retry_after_tool_error as retry
from durable_loop.core.reply_check import NO_RESULTS, TEXT_CALL_PATCH_ID, answer_check


def facts(
    *,
    patched: bool | set[str] = True,
    asked: list[str] | None = None,
    offered: tuple[str, ...] = ("note_add", "note_list"),
    **kw,
) -> MessageFacts:
    """``patched``: every patch (True), none (False), or only the ids in the set."""
    calls = [] if asked is None else asked

    def ask(patch: str) -> bool:
        calls.append(patch)
        return patch in patched if isinstance(patched, set) else patched

    return MessageFacts(registered=frozenset(offered), offered=list(offered), patched=ask, **kw)


WITH_CALCULATE = ("calculate", "note_add", "note_list")


def test_fix_empty_final_fires_on_a_blank_reply_after_calls_only():
    settings = empty.FixEmptyFinal(disable_tools=False)
    assert empty.judge(settings, Event(text=" ", tool_calls_made=0), facts()) is None
    action = empty.judge(settings, Event(text=" ", tool_calls_made=1), facts())
    assert action is not None and action.tools_off is False and action.prompt == settings.text


def test_retry_names_the_offered_tools_after_an_unknown_one_and_clears_the_failure():
    f = facts(request_text="say hi")
    f.note_outcome("say_hello", [ErrorCode.TOOL_NOT_FOUND], "no such tool")
    action = retry.judge(retry.RetryAfterToolError(), Event(), f)
    assert action is not None and "note_add, note_list" in action.prompt
    assert action.require_tool_call is False and f.last_failure is None


def test_retry_leaves_a_final_failure_standing_under_its_patch():
    patches: list[str] = []
    f = facts(asked=patches)
    f.note_outcome("note_add", [ErrorCode.TOOL_CALL_REJECTED], "rejected")
    assert retry.judge(retry.RetryAfterToolError(), Event(), f) is None
    assert patches == [retry.FINAL_FAILURES_PATCH_ID]


def test_finalize_after_repeat_quotes_the_request_on_a_line_of_its_own():
    f = facts(request_text="Save a note saying buy milk, then tell me how many notes I have.")
    f.note_result("note_list", '[{"id": 1, "text": "buy milk"}]')
    settings = after_repeat.FinalizeAfterRepeat()
    action = after_repeat.judge(settings, Event(), f)
    assert action is not None
    assert '- note_list: [{"id": 1, "text": "buy milk"}]\nThe user\'s request was: "Save a' in (
        action.prompt
    )
    assert action.prompt.endswith(
        "how many notes I have.\"\nAnswer the user's request now in "
        "one or two plain sentences, using these results. Do not write JSON, code or a "
        "function call."
    )


def test_finalize_after_repeat_without_a_request_or_with_an_older_text():
    resumed = after_repeat.judge(after_repeat.FinalizeAfterRepeat(), Event(), facts())
    assert resumed is not None and "request was" not in resumed.prompt
    assert f"results so far:\n{NO_RESULTS}\nAnswer the user's" in resumed.prompt
    older = after_repeat.FinalizeAfterRepeat(text=after_repeat.TEXT_UNTIL_2026_11_27)
    action = after_repeat.judge(older, Event(), facts(request_text="What is 2 + 2?"))
    assert action is not None and action.prompt.startswith("You already made that call")
    assert "What is 2 + 2?" not in action.prompt


def test_finalization_requests_say_what_each_tool_does_beside_its_results():
    descriptions = {"note_add": "Save a short note for later. Returns its id.", "calculate": ""}
    f = facts(request_text="Note for later: email Anna the slides.", descriptions=descriptions)
    f.note_result("note_add", '{"id": 1, "text": "email Anna the slides"}')
    f.note_result("calculate", "6")
    shown = (
        '- note_add (Save a short note for later): {"id": 1, "text": "email Anna the slides"}\n'
        "- calculate: 6\n"
    )
    repeat = after_repeat.judge(after_repeat.FinalizeAfterRepeat(), Event(), f)
    assert repeat is not None and shown in repeat.prompt
    text_call = CodedError(code=ErrorCode.REPLY_NOT_AN_ANSWER, message="a text call")
    action = finalize.judge(finalize.FinalizeTextCallReply(), Event(failure=text_call), f)
    assert action is not None and shown in action.prompt
    refused = unasked.finalization(unasked.RefuseUnaskedCall(), "calculate", ["expression"], f)
    assert refused.prompt.startswith(
        "No more tools will run. The tool results so far:\n- note_add (Save a short note "
        'for later): {"id": 1, "text": "email Anna the slides"}\nAnswer my request'
    )


def test_call_requested_tool_asks_once_per_named_tool():
    f = facts(request_text="add a note with note_add, then note_list")
    settings = requested.CallRequestedTool()
    first = requested.judge(settings, Event(text="Done."), f)
    second = requested.judge(settings, Event(text="Done."), f)
    assert first is not None and "note_add" in first.prompt and first.require_tool_call
    assert second is not None and "note_list" in second.prompt
    assert requested.judge(settings, Event(text="Done."), f) is None


def test_the_routed_tool_is_asked_for_once_after_another_call_quoting_the_request():
    patches: list[str] = []
    f = facts(
        asked=patches,
        offered=WITH_CALCULATE,
        request_text="Work out 6*7, then save it as a note",
        routed_tool="note_add",
    )
    settings = requested.CallRequestedTool()
    assert requested.judge(settings, Event(text="42"), f) is None  # no call made yet
    f.note_result("calculate", "42")
    action = requested.judge(settings, Event(text="42"), f)
    assert action is not None and action.require_tool_call and not action.tools_off
    assert action.prompt.startswith('My request was: "Work out 6*7, then save it as a note" ')
    assert "note_add" in action.prompt and patches == [requested.ROUTED_PATCH_ID]
    assert requested.judge(settings, Event(text="42"), f) is None


@pytest.mark.parametrize(
    ("request_text", "routed", "called"),
    [
        ("Work out 6*7 but don't save it", "note_add", "calculate"),
        ("Work out 6*7, then save it", "note_add", "note_add"),
        ("Work out 6*7, then save it", "calculate_more", "calculate"),
        ("", "note_add", "calculate"),
    ],
)
def test_no_routed_tool_after_a_negation_a_call_of_it_or_outside_the_offer(
    request_text, routed, called
):
    patches: list[str] = []
    f = facts(asked=patches, request_text=request_text, routed_tool=routed)
    f.note_result(called, "42")
    assert requested.judge(requested.CallRequestedTool(), Event(text="42"), f) is None
    assert patches == []


@pytest.mark.parametrize(
    ("request_text", "routed", "called"),
    [
        ("I need to send $50 to Margaret", "payment_request", "payment_make"),
        ("Remove the second item from my todo list.", "todoIdx", "todo_list_action"),
        ("Work out 6*7, then save it", "note_add", "calculate"),
    ],
)
def test_no_routed_tool_when_the_request_names_nothing_its_calls_do_not(
    request_text, routed, called
):
    """BFCL live_multiple_896-185-6 and 62-24-0: the gate guessed the entry's other tool
    after the model's right call; "payment" and "todo" belong to the call made."""
    patches: list[str] = []
    offered = (called, routed, "note_list")
    f = facts(asked=patches, offered=offered, request_text=request_text, routed_tool=routed)
    f.note_result(called, "done")
    assert requested.judge(requested.CallRequestedTool(), Event(text="Done."), f) is None
    assert patches == [requested.NAMED_PATCH_ID]


def test_a_run_from_before_the_named_patch_asks_for_the_routed_tool_as_recorded():
    patches: list[str] = []
    f = facts(
        patched={requested.ROUTED_PATCH_ID, requested.OFFERED_CALL_PATCH_ID},
        asked=patches,
        offered=WITH_CALCULATE,
        request_text="Work out 6*7, then save it",
        routed_tool="note_add",
    )
    f.note_result("calculate", "42")
    action = requested.judge(requested.CallRequestedTool(), Event(text="42"), f)
    assert action is not None and "note_add" in action.prompt
    assert patches == [requested.NAMED_PATCH_ID, requested.ROUTED_PATCH_ID]


def test_a_run_from_before_the_routed_patch_answers_as_recorded():
    f = facts(
        patched=False,
        offered=WITH_CALCULATE,
        request_text="Work out 6*7, then save it",
        routed_tool="note_add",
    )
    f.note_result("calculate", "42")
    assert requested.judge(requested.CallRequestedTool(), Event(text="42"), f) is None


def test_no_routed_tool_is_forced_after_calls_of_made_up_tools_only():
    """BFCL irrelevance_0: "the area of a triangle", only determine_body_mass_index
    offered; the model calls calculate_area_of_triangle, which does not exist."""
    patches: list[str] = []
    f = facts(
        asked=patches,
        offered=WITH_CALCULATE,
        request_text="Area of a triangle, base 10? Keep it in my notes.",
        routed_tool="note_add",
    )
    f.note_result("calculate_area_of_triangle", "TOOL_NOT_FOUND: no such tool")
    assert requested.judge(requested.CallRequestedTool(), Event(text="50"), f) is None
    assert patches == [requested.OFFERED_CALL_PATCH_ID]
    f.note_result("calculate", "50")
    action = requested.judge(requested.CallRequestedTool(), Event(text="50"), f)
    assert action is not None and "note_add" in action.prompt


def test_a_run_from_before_the_offered_call_patch_asks_as_recorded():
    patches: list[str] = []
    f = facts(
        patched={requested.ROUTED_PATCH_ID},
        asked=patches,
        request_text="Area of a triangle, base 10?",
        routed_tool="note_add",
    )
    f.note_result("calculate_area_of_triangle", "TOOL_NOT_FOUND: no such tool")
    action = requested.judge(requested.CallRequestedTool(), Event(text="50"), f)
    assert action is not None and action.require_tool_call and "note_add" in action.prompt
    assert patches == [
        requested.OFFERED_CALL_PATCH_ID,
        requested.NAMED_PATCH_ID,
        requested.ROUTED_PATCH_ID,
    ]


LAWSUIT_REFERRAL = "You can use the `note_add` function with the restaurant's name."


def test_a_referred_tool_is_not_forced_after_calls_of_made_up_tools_only():
    """BFCL irrelevance_97: a restaurant question, the model calls ``Ming Yuan`` (made up),
    then tells the person to use the one offered tool the loop's note listed."""
    patches: list[str] = []
    f = facts(asked=patches, request_text="Recommend a Chinese restaurant in New York")
    f.note_result("Ming Yuan", "TOOL_NOT_FOUND: no such tool")
    assert referred.judge(referred.CallReferredTool(), Event(text=LAWSUIT_REFERRAL), f) is None
    assert patches == [TEXT_CALL_PATCH_ID, referred.OFFERED_CALL_PATCH_ID]


@pytest.mark.parametrize("called", [None, "note_list"])
def test_a_referred_tool_is_asked_for_with_no_call_or_after_an_offered_one(called):
    patches: list[str] = []
    f = facts(asked=patches, request_text="remember to call the plumber")
    if called:
        f.note_result(called, "[]")
    action = referred.judge(referred.CallReferredTool(), Event(text=LAWSUIT_REFERRAL), f)
    assert action is not None and action.require_tool_call and "Call note_add now" in action.prompt
    assert patches == [TEXT_CALL_PATCH_ID]


def test_a_run_from_before_the_referred_offered_call_patch_asks_as_recorded():
    f = facts(patched={TEXT_CALL_PATCH_ID}, request_text="Recommend a restaurant")
    f.note_result("Ming Yuan", "TOOL_NOT_FOUND: no such tool")
    action = referred.judge(referred.CallReferredTool(), Event(text=LAWSUIT_REFERRAL), f)
    assert action is not None and action.require_tool_call


def test_a_run_from_before_a_patch_keeps_its_old_branch():
    f = facts(patched=False, request_text="use note_add")
    assert requested.judge(requested.CallRequestedTool(), Event(text="Done."), f) is None


def test_the_answer_check_refuses_a_text_call_and_finalize_answers_it_once():
    patches: list[str] = []
    f = facts(asked=patches)
    text = '{"name": "note_list", "arguments": {}}'
    failure, plain = answer_check(text, f.registered, f.patched, recovered=False)
    assert failure is not None and failure.code == ErrorCode.REPLY_NOT_AN_ANSWER and not plain
    assert patches == [TEXT_CALL_PATCH_ID]
    action = finalize.judge(finalize.FinalizeTextCallReply(), Event(failure=failure), f)
    assert action is not None and action.tools_off is True
    f.uses[finalize.NAME] = 1
    assert finalize.judge(finalize.FinalizeTextCallReply(), Event(failure=failure), f) is None


def test_finalize_answers_only_the_answer_check():
    other = CodedError(code=ErrorCode.EMPTY_FINAL, message="empty")
    assert finalize.judge(finalize.FinalizeTextCallReply(), Event(failure=other), facts()) is None


def test_a_plain_answer_passes_the_check_without_asking_a_patch():
    patches: list[str] = []
    f = facts(asked=patches)
    assert answer_check("It is 80.", f.registered, f.patched, recovered=False) == (None, True)
    assert patches == []


def test_finalize_when_done_asks_for_the_answer_only_when_nothing_is_left():
    settings = when_done.FinalizeWhenDone()
    patches: list[str] = []
    f = facts(asked=patches, request_text="What is 37 times 43?")
    f.note_result("calculate", "1591")
    assert when_done.judge(settings, Event(request_left=("number",), calls_ok=True), f) is None
    assert when_done.judge(settings, Event(request_left=(), calls_ok=False), f) is None
    assert when_done.judge(settings, Event(request_left=None, calls_ok=True), f) is None
    assert patches == []
    action = when_done.judge(settings, Event(request_left=(), calls_ok=True), f)
    assert action is not None and action.tools_off is True
    assert patches == [when_done.PATCH_ID]
    assert action.prompt.startswith("No more tools will run. The tool results so far:\n")
    assert 'The user\'s request was: "What is 37 times 43?"\nAnswer the user' in action.prompt
    resumed = facts(request_text="")
    assert when_done.judge(settings, Event(request_left=(), calls_ok=True), resumed) is None


def test_continue_after_repeat_brings_the_tools_back_once_for_a_value_left():
    settings = carry_on.ContinueAfterRepeat()
    patches: list[str] = []
    f = facts(asked=patches, request_text="Play Taylor Swift and Maroon 5")
    for left in [None, (), ("step word",), ("subject note", "step word")]:
        assert carry_on.judge(settings, Event(request_left=left), f) is None
    assert patches == []
    action = carry_on.judge(settings, Event(request_left=("name", "number")), f)
    assert action is not None and action.tools_off is False and not action.require_tool_call
    assert patches == [carry_on.PATCH_ID], "a number left: the names patch is not asked"
    assert '"Play Taylor Swift and Maroon 5"' in action.prompt
    f.uses[carry_on.NAME] = 1
    assert carry_on.judge(settings, Event(request_left=("number",)), f) is None
    resumed = facts(request_text="")
    assert carry_on.judge(settings, Event(request_left=("list item",)), resumed) is None


def test_continue_after_repeat_leaves_names_and_made_up_tools_to_finalizing():
    """Since patch ``continue-after-repeat-narrowed``, a name left alone and the repeat of
    a tool that does not exist are finalized; a history from before the patch (not set)
    still brings the tools back for them, as it did."""
    settings = carry_on.ContinueAfterRepeat()
    asked: list[str] = []
    f = facts(asked=asked, request_text="Find the Hilton for Anna, 2 nights")
    assert carry_on.judge(settings, Event(request_left=("name", "step word")), f) is None
    assert asked == [carry_on.NARROWED_PATCH_ID]
    made_up = Event(request_left=("number",), made_up_repeat=True)
    assert carry_on.judge(settings, made_up, f) is None
    known = Event(request_left=("number",))
    assert carry_on.judge(settings, known, f) is not None
    before = facts(patched={carry_on.PATCH_ID}, request_text="Find the Hilton for Anna")
    for event in [Event(request_left=("name",)), made_up]:
        action = carry_on.judge(settings, event, before)
        assert action is not None and action.tools_off is False
    listed = facts(request_text="Play jazz and rock")
    assert carry_on.judge(settings, Event(request_left=("list item", "name")), listed)
