"""A tool call written as text that no transform accepted is named, with the fix."""

from __future__ import annotations

from durable_loop.core.transforms.text_calls import text_call_warning

TAGGED = 'Sure.\n<tool_call>{"name": "add", "arguments": {"a": 1}}</tool_call>'
FENCED = '```json\n{"name": "add", "arguments": {"a": 1}}\n```'


def test_tagged_call_names_the_tag_transform_and_preset():
    warning = text_call_warning(TAGGED, ["add"], [])
    assert warning is not None
    assert "'add'" in warning and "not executed" in warning
    assert "assistant_content_tool_call_tags_to_tool_calls" in warning
    assert "content_tag_tool_call_fallback" in warning


def test_fenced_json_naming_an_offered_tool_names_the_json_transform():
    warning = text_call_warning(FENCED, ["add"], [])
    assert warning is not None and "assistant_content_json_tool_calls_to_tool_calls" in warning


def test_no_warning_when_the_transform_is_configured_or_nothing_was_offered():
    assert (
        text_call_warning(TAGGED, ["add"], ["assistant_content_tool_call_tags_to_tool_calls"])
        is None
    )
    assert text_call_warning(FENCED, ["sub"], []) is None
    assert text_call_warning(TAGGED, [], []) is None
    assert text_call_warning("The answer is 5.", ["add"], []) is None
