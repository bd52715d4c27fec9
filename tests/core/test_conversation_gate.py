"""The conversation gate's request and the reading of its answer (core/conversation_gate)."""

from __future__ import annotations

import pytest

from durable_loop.core.conversation_gate import (
    gate_options,
    gate_tools,
    is_conversation,
    routed_tool,
)
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.tools import ToolSpec

NAMES = ["calculate", "note_add"]


@pytest.mark.parametrize(
    ("answer", "conversation"),
    [
        ('{"tool": "none"}', True),
        ('```json\n{"tool": "none"}\n```', True),
        ('{"tool": "calculate"}', False),
        ('{"tool": "None"}', False),
        ("none", False),
        ('{"tool": "none"', False),
        ("[]", False),
        ("", False),
    ],
)
def test_only_a_readable_none_withholds_the_tools(answer, conversation):
    assert is_conversation(answer, NAMES) is conversation


def test_a_tool_named_none_makes_the_gate_never_withhold():
    assert not is_conversation('{"tool": "none"}', ["none", "calculate"])


@pytest.mark.parametrize(
    ("answer", "routed"),
    [
        ('{"tool": "note_add"}', "note_add"),
        ('```json\n{"tool": "calculate"}\n```', "calculate"),
        ('{"tool": "none"}', None),
        ('{"tool": "note_list"}', None),
        ("note_add", None),
    ],
)
def test_the_routed_tool_is_an_offered_name_the_answer_reads_as(answer, routed):
    assert routed_tool(answer, NAMES) == routed


def test_tools_are_listed_by_the_first_line_of_their_description():
    long = ToolSpec(name="a", description="x" * 300 + "\nmore", parameters={"type": "object"})
    bare = ToolSpec(name="b", description="", parameters={"type": "object"})
    listed = gate_tools([long, bare])
    assert [(t.name, len(t.summary)) for t in listed] == [("a", 200), ("b", 0)]


def endpoint(provider: str, **options) -> LlmEndpoint:
    return LlmEndpoint(provider=provider, model="m", base_url="http://x", llm_options=options)


def test_openai_compatible_requests_get_the_choice_as_a_json_schema_and_a_short_reply():
    options = gate_options(endpoint("openai", temperature=0, max_tokens=768), {"seed": 1}, NAMES)
    schema = options["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["tool"]["enum"] == [*NAMES, "none"]
    assert schema["additionalProperties"] is False
    assert options["max_tokens"] == 32 and options["temperature"] == 0 and options["seed"] == 1


def test_max_completion_tokens_is_capped_where_the_session_uses_it():
    options = gate_options(endpoint("openai", max_completion_tokens=900), {}, NAMES)
    assert options["max_completion_tokens"] == 32 and "max_tokens" not in options


def test_gemini_gets_a_response_schema_and_anthropic_the_prompt_alone():
    gemini = gate_options(endpoint("gemini"), {}, NAMES)["generationConfig"]
    assert gemini["responseJsonSchema"]["properties"]["tool"]["enum"][-1] == "none"
    assert gemini["maxOutputTokens"] == 32
    anthropic = gate_options(endpoint("anthropic"), {}, NAMES)
    assert "response_format" not in anthropic and anthropic["max_tokens"] == 32
