"""The context window keeps the system prompt and the newest messages, keeps calls with
their results, replaces a summarised prefix, and reports what it left out."""

from __future__ import annotations

from durable_loop.core.context_window import (
    TranscriptItem,
    build_context,
    message_chars,
    summary_message,
)
from durable_loop.core.endpoint import ContextWindow
from durable_loop.core.envelope import Envelope
from durable_loop.core.messages import Message, ToolCall


def transcript() -> list[TranscriptItem]:
    messages = [
        Message.user("a" * 100),  # 0
        Message(role="assistant", content="b" * 100),  # 1
        Message.user("c" * 100),  # 2
        Message(role="assistant", tool_calls=[ToolCall(id="t", name="add", arguments="{}")]),  # 3
        Message.tool_result("t", "add", Envelope.success("d" * 80)),  # 4
        Message(role="assistant", content="e" * 50),  # 5
        Message.user("f" * 20),  # 6
    ]
    return [TranscriptItem(seq=i, message=m) for i, m in enumerate(messages)]


def test_without_a_window_everything_is_sent():
    context = build_context(transcript(), system_prompt="sys", window=None)
    assert len(context.messages) == 8 and context.messages[0].role == "system"
    assert context.report.dropped == 0 and context.report.first_kept_seq == 0


def test_the_newest_messages_fit_and_a_call_never_loses_its_result():
    items = transcript()
    tail = sum(message_chars(i.message) for i in items[3:])
    context = build_context(items, system_prompt="sys", window=ContextWindow(max_chars=tail + 3))
    assert [m.role for m in context.messages] == [
        "system",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    report = context.report
    assert report.dropped_seqs == [0, 1, 2] and report.first_kept_seq == 3
    assert report.dropped_chars == 300 and not report.over_budget
    # one character less and the call goes together with its result
    smaller = build_context(items, system_prompt="sys", window=ContextWindow(max_chars=tail + 2))
    assert smaller.report.first_kept_seq == 5
    assert all(m.role != "tool" for m in smaller.messages)


def test_tool_definitions_count_against_the_budget():
    items = transcript()
    roomy = build_context(items, system_prompt=None, window=ContextWindow(max_chars=400))
    tight = build_context(
        items, system_prompt=None, window=ContextWindow(max_chars=400), fixed_chars=200
    )
    assert tight.report.dropped > roomy.report.dropped


def test_tokens_become_characters_conservatively():
    assert ContextWindow(max_tokens=100).budget_chars() == 300
    assert ContextWindow(max_tokens=100, max_chars=200).budget_chars() == 200
    assert ContextWindow().budget_chars() is None


def test_the_newest_unit_is_always_sent_even_over_budget():
    context = build_context(transcript(), system_prompt=None, window=ContextWindow(max_chars=5))
    assert [m.content for m in context.messages] == ["f" * 20]
    assert context.report.over_budget and context.report.first_kept_seq == 6


def test_a_summary_replaces_the_prefix_it_covers():
    items = [
        *transcript(),
        TranscriptItem(seq=7, message=summary_message("the user wanted sums"), summary_of=3),
        TranscriptItem(seq=8, message=Message.user("g")),
    ]
    context = build_context(items, system_prompt="sys", window=None)
    assert context.messages[1].content.endswith("the user wanted sums")
    assert [m.content for m in context.messages[2:3]] == [None]  # seq 3, the call
    assert all(m.content != "a" * 100 for m in context.messages)
    assert context.report.summary_seq == 7 and context.report.summary_covers_upto == 3
    assert context.messages[-1].content == "g"
