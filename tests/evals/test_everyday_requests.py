"""The everyday scenarios by pattern (issue 31 §3): the ideal model passes every one, under
the baseline and under the local model's production settings; a model that calls a tool
for a message with no request, saves a note without the result, or claims an action the
note only names, fails them."""

from __future__ import annotations

from durable_loop.core import presets
from durable_loop.core.envelope import Envelope
from durable_loop.core.messages import Message, ToolCall
from durable_loop.evals.scenario import Trace
from durable_loop.evals.scenarios_everyday_requests import (
    COMPOUND,
    HONEST,
    NO_REQUEST,
    REQUESTS,
)
from tests.evals.kit import run_offline

LOCAL_PRODUCTION = presets.for_model("openai", "qwen2.5-coder-1.5b-instruct")


def _trace(reply: str, *calls: tuple[str, str, bool]) -> Trace:
    transcript: list[Message] = [Message(role="user", content="…")]
    for n, (name, arguments, ok) in enumerate(calls):
        call = ToolCall(id=f"c{n}", name=name, arguments=arguments)
        envelope = Envelope.success(1) if ok else Envelope.failure("TOOL_ERROR", "no")
        transcript += [
            Message(role="assistant", tool_calls=[call]),
            Message.tool_result(call.id, name, envelope),
        ]
    transcript.append(Message(role="assistant", content=reply))
    made = [(name, ok, []) for name, _, ok in calls]
    return Trace("completed", reply, made, transcript, None)  # type: ignore[arg-type]


def test_there_are_at_least_twenty_no_request_messages_and_several_of_each_kind():
    assert len({s.prompt for s in NO_REQUEST}) >= 20
    assert min(len(COMPOUND), len(HONEST)) >= 3


def test_a_tool_call_on_a_message_with_no_request_fails_it():
    thanks = NO_REQUEST[0]
    assert thanks.check(_trace("You're welcome!")) == []
    problems = thanks.check(_trace("Saved.", ("note_add", '{"text":"thanks"}', True)))
    assert problems == ["a message with no request called ['note_add']"]


def test_a_compound_request_needs_the_result_in_a_saved_note():
    rent = COMPOUND[0]
    both = _trace(
        "420, saved.",
        ("calculate", '{"expression":"1260 / 3"}', True),
        ("note_add", '{"text":"Rent share: 420"}', True),
    )
    assert rent.check(both) == []
    first_only = _trace("It is 420.", ("calculate", '{"expression":"1260 / 3"}', True))
    assert rent.check(first_only) == ["no successful note_add call saved '420'"]
    failed_note = _trace(
        "420, saved.",
        ("calculate", '{"expression":"1260 / 3"}', True),
        ("note_add", '{"text":"Rent share: 420"}', False),
    )
    assert rent.check(failed_note) == ["no successful note_add call saved '420'"]


def test_a_reply_claiming_the_noted_action_was_done_fails():
    plumber = HONEST[0]
    note = ("note_add", '{"text":"Call the plumber"}', True)
    assert plumber.check(_trace("I saved a note to call the plumber.", note)) == []
    (problem,) = plumber.check(_trace("I already called the plumber.", note))
    assert "claims an action no tool did" in problem


async def test_the_ideal_model_passes_every_pattern_scenario(loop_worker, store_url, scripted_llm):
    runs = [
        ("well_behaved", "baseline", {}, list(REQUESTS)),
        ("well_behaved", "production", LOCAL_PRODUCTION, list(REQUESTS)),
    ]
    records = await run_offline(loop_worker, store_url, scripted_llm, runs)
    failed = {key: r.failure for key, r in records.items() if not r.ok}
    assert len(records) == 2 * len(REQUESTS)
    assert not failed, failed
