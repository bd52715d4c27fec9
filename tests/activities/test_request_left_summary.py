"""What the LLM activity reads as the person's words. ``request_left``: the person's last
message against every call made for it since, the new reply's included; the loop's own
prompts are not the request. ``heard_in`` (read by ``args_unsaid``): the loop's prompts may
give values, but only the person's messages name a tool."""

from __future__ import annotations

from pydantic import JsonValue

from durable_loop.activities.llm import heard_in, with_request_left
from durable_loop.core.activity_contracts import LlmTurnInput, LlmTurnOutput, TranscriptRef
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.messages import Message, StoredMessage, ToolCall
from durable_loop.core.said_values import unsaid_arguments

OFFERED = ["calculate", "note_add", "note_list"]


def calls(*pairs: tuple[str, str]) -> Message:
    return Message(
        role="assistant",
        tool_calls=[ToolCall(id=f"c{i}", name=n, arguments=a) for i, (n, a) in enumerate(pairs)],
    )


def rows(*messages: Message) -> list[StoredMessage]:
    return [StoredMessage(seq=i, message=m) for i, m in enumerate(messages)]


def turn_input(*, wants: bool = True) -> LlmTurnInput:
    return LlmTurnInput(
        transcript=TranscriptRef(session_id="s", upto_seq=99),
        turn=1,
        assistant_seq=99,
        endpoint=LlmEndpoint(provider="openai", model="m"),
        tool_names=OFFERED,
        wants_request_left=wants,
    )


def left(history: list[StoredMessage], reply: Message, *, wants: bool = True) -> list[str] | None:
    out = LlmTurnOutput(assistant_seq=99)
    return with_request_left(out, history, reply, turn_input(wants=wants)).request_left


def test_earlier_calls_of_the_message_count_and_a_synthetic_prompt_is_not_the_request():
    history = rows(
        Message.user("What is 7 times 45? Then save it as a note."),
        calls(("calculate", '{"expression": "7 * 45"}')),
        Message.user("Use the tools if you need them.", synthetic=True),
    )
    note = calls(("note_add", '{"text": "7 times 45 = 315"}'))
    assert left(history, note) == []
    assert left(history[:1], calls(("calculate", '{"expression": "7 * 45"}'))) == [
        "step word",
        "subject note",
    ]


def test_calls_of_an_earlier_message_do_not_count_and_a_text_reply_gets_none():
    history = rows(
        Message.user("Add 2 and 3."),
        calls(("calculate", '{"expression": "2 + 3"}')),
        Message.user("And 4 and 6?"),
    )
    assert left(history, calls(("calculate", '{"expression": "4 + 9"}'))) == ["number"]
    assert left(history, Message(role="assistant", content="10")) is None


def test_arguments_that_are_not_an_object_carry_nothing():
    history = rows(Message.user("What is 12 squared?"))
    assert left(history, calls(("calculate", '{"expression": "12 ** 2"'))) == ["number"]


def test_a_session_without_finalize_when_done_does_not_ask_and_an_old_payload_does():
    history = rows(Message.user("What is 12 squared?"))
    reply = calls(("calculate", '{"expression": "12 ** 2"}'))
    assert left(history, reply, wants=False) is None
    old = turn_input().model_dump(mode="json")
    del old["wants_request_left"]
    assert LlmTurnInput.model_validate(old).wants_request_left is True


LAWSUIT = {
    "type": "object",
    "properties": {"defendant": {"type": "string"}, "plaintiff": {"type": "string"}},
    "required": ["defendant", "plaintiff"],
}


def unsaid_lawsuit(history: list[StoredMessage]) -> list[str]:
    """The values nobody gave of a lawsuit filed with made-up parties."""
    args: dict[str, JsonValue] = {"defendant": "John Doe", "plaintiff": "Jane Smith"}
    heard = heard_in(turn_input(), history)
    return unsaid_arguments(args, LAWSUIT, heard, tool="file_lawsuit", offered=["file_lawsuit"])


def test_a_loop_prompt_naming_the_tool_does_not_exempt_its_made_up_values():
    history = rows(
        Message.user("Can you recommend a good Chinese restaurant in New York?"),
        Message.user(
            "There is no tool named Ming Yuan. The tools you have are: file_lawsuit.",
            synthetic=True,
        ),
        Message.user("Do not tell the user to use file_lawsuit: call it yourself.", synthetic=True),
    )
    assert unsaid_lawsuit(history) == ["defendant", "plaintiff"]


def test_the_person_naming_the_tool_exempts_it_and_a_loop_prompt_may_still_give_values():
    assert unsaid_lawsuit(rows(Message.user("Help me file a lawsuit, please."))) == []
    comment = rows(
        Message.user("Who should I sue?"),
        Message.user('[workspace] Proposal p1 was rejected. Comment: "John Doe"', synthetic=True),
    )
    assert unsaid_lawsuit(comment) == ["plaintiff"]
