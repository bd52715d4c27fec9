"""The pure rules of typed answers: schema checks, judging an answer, the retry text, and
how each provider's request asks for a typed answer."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from durable_loop.core.activity_contracts import LlmTurnInput, TranscriptRef
from durable_loop.core.config import RuntimeConfig
from durable_loop.core.contracts import RunResult, UserMessage
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.errors import CodedError
from durable_loop.core.messages import Message, ToolCall
from durable_loop.core.providers import ADAPTERS
from durable_loop.core.registry import ToolRegistry
from durable_loop.core.request import TurnHistory, plan_turn
from durable_loop.core.tools import ToolSpec
from durable_loop.core.transforms.pipeline import Outbound
from durable_loop.core.typed_output import (
    FINAL_ANSWER_TOOL,
    final_answer_from_call,
    judge_answer,
    retry_text,
    schema_problem,
    shape_for_output,
)
from durable_loop.core.typed_output.parse import OutputUnavailable, schema_of

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
ADD = ToolSpec(name="add", parameters={"type": "object", "properties": {}})


def test_schema_problem_names_the_fault_and_accepts_valid_schemas():
    assert schema_problem(SCHEMA) is None
    assert schema_problem({"$schema": "http://json-schema.org/draft-07/schema#"}) is None
    problem = schema_problem({"type": "object", "properties": {"n": {"minimum": "0"}}})
    assert problem is not None and "at /properties/n/minimum" in problem


@pytest.mark.parametrize(
    ("text", "truncated", "expected"),
    [
        ('{"n": 1}', False, {"n": 1}),
        ('```json\n{"n": 2}\n```', False, {"n": 2}),
        ('{"n": "x"}', False, "at /n: 'x' is not of type 'integer'"),
        ('Sure: {"n": 1}', False, "not valid JSON"),
        ("", False, "empty"),
        ('{"n": 1}', True, "reply_inline_bytes"),
        ('{"n": NaN}', False, "not valid JSON"),
    ],
)
def test_judge_answer(text, truncated, expected):
    verdict = judge_answer(text, SCHEMA, truncated=truncated)
    if isinstance(expected, dict):
        assert verdict.ok and verdict.value == expected
    else:
        assert not verdict.ok and expected in verdict.errors[0]


def test_a_schema_that_fails_while_validating_is_an_error_not_an_exception():
    verdict = judge_answer("1", {"$ref": "https://example.com/remote"}, truncated=False)
    assert not verdict.ok and "cannot be applied" in verdict.errors[0]


def test_many_errors_are_capped_and_the_retry_text_lists_them():
    schema = {"type": "array", "items": {"type": "integer"}}
    verdict = judge_answer('["a","b","c","d","e","f","g","h","i","j"]', schema, truncated=False)
    assert len(verdict.errors) == 9 and verdict.errors[-1] == "... and 2 more"
    text = retry_text(verdict.errors[:2])
    assert "- at /0: 'a' is not of type 'integer'\n- at /1:" in text


@pytest.mark.parametrize(
    ("provider", "preferred", "tools", "mode"),
    [
        ("openai", None, [ADD], "native"),
        ("openai", "tool", [ADD], "tool"),
        ("anthropic", "native", [], "tool"),
        ("gemini", None, [], "native"),
        ("gemini", None, [ADD], "tool"),
    ],
)
def test_each_provider_asks_natively_or_by_the_final_answer_tool(provider, preferred, tools, mode):
    shaped, choice, options = shape_for_output(
        provider, preferred, SCHEMA, tools=tools, tool_choice="auto", options={"seed": 1}
    )
    if mode == "tool":
        assert [t.name for t in shaped][-1] == FINAL_ANSWER_TOOL
        assert shaped[-1].parameters == SCHEMA and options == {"seed": 1}
        forced = {"type": "function", "function": {"name": FINAL_ANSWER_TOOL}}
        assert choice == ("required" if tools else forced)
    else:
        assert shaped == tools and choice == "auto"
        key = "generationConfig" if provider == "gemini" else "response_format"
        assert key in options and options["seed"] == 1


def test_a_request_that_must_not_call_a_real_tool_forces_the_final_answer():
    _, choice, _ = shape_for_output(
        "anthropic", None, SCHEMA, tools=[ADD], tool_choice="none", options={}
    )
    assert choice == {"type": "function", "function": {"name": FINAL_ANSWER_TOOL}}


def test_final_answer_call_becomes_the_text_and_is_dropped_beside_real_calls():
    final = ToolCall(id="f", name=FINAL_ANSWER_TOOL, arguments='{"n":3}')
    alone = final_answer_from_call(Message(role="assistant", tool_calls=[final]), SCHEMA)
    assert alone.content == '{"n":3}' and alone.tool_calls == []
    add = ToolCall(id="a", name="add", arguments="{}")
    both = final_answer_from_call(Message(role="assistant", tool_calls=[add, final]), SCHEMA)
    assert [c.name for c in both.tool_calls] == ["add"]
    wrapped = ToolCall(id="w", name=FINAL_ANSWER_TOOL, arguments='{"value":[1,2]}')
    listed = final_answer_from_call(
        Message(role="assistant", tool_calls=[wrapped]), {"type": "array"}
    )
    assert listed.content == "[1,2]"


def _turn(provider: str, schema, structured=None) -> dict:
    endpoint = LlmEndpoint(provider=provider, model="m", structured_output=structured)
    inp = LlmTurnInput(
        transcript=TranscriptRef(session_id="s", upto_seq=1),
        turn=1,
        assistant_seq=1,
        endpoint=endpoint,
        output_schema=schema,
    )
    turn = plan_turn(ToolRegistry(), inp, TurnHistory(messages=[], unread=0, reply=None))
    messages = [Message.user("hi")]
    return Outbound().encode(ADAPTERS[provider], turn.plan, messages).body


def test_request_bodies_per_provider_and_untouched_without_a_schema():
    assert _turn("openai", SCHEMA)["response_format"]["json_schema"]["schema"] == SCHEMA
    assert "response_format" not in _turn("openai", None)
    anthropic = _turn("anthropic", SCHEMA)
    assert anthropic["tools"][0]["name"] == FINAL_ANSWER_TOOL
    assert anthropic["tool_choice"] == {"type": "tool", "name": FINAL_ANSWER_TOOL}
    gemini = _turn("gemini", SCHEMA)["generationConfig"]
    assert gemini == {"responseMimeType": "application/json", "responseJsonSchema": SCHEMA}
    assert _turn("openai", SCHEMA, "tool")["tool_choice"]["function"]["name"] == "final_answer"


def _local_turn(tools: ToolRegistry) -> dict:
    """The packaged local model (llama.cpp answers HTTP 500 to a response schema beside
    tools): its catalog entry says so, and the request asks by the final_answer tool."""
    inp = LlmTurnInput(
        transcript=TranscriptRef(session_id="s", upto_seq=1),
        turn=1,
        assistant_seq=1,
        endpoint=LlmEndpoint(model="qwen2.5-coder-1.5b-instruct"),
        tool_names=tools.names(),
        send_tools=True,
        output_schema=SCHEMA,
    )
    turn = plan_turn(tools, inp, TurnHistory(messages=[], unread=0, reply=None))
    return Outbound().encode(ADAPTERS["openai"], turn.plan, [Message.user("hi")]).body


def test_a_model_whose_server_rejects_a_schema_beside_tools_gets_the_tool_then():
    with_tools = ToolRegistry()

    @with_tools.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    body = _local_turn(with_tools)
    assert "response_format" not in body
    assert [t["function"]["name"] for t in body["tools"]] == ["add", FINAL_ANSWER_TOOL]
    assert body["tool_choice"] == "required"
    alone = _local_turn(ToolRegistry())
    assert alone["response_format"]["json_schema"]["schema"] == SCHEMA and "tools" not in alone


def test_response_format_stays_reserved_for_this_feature():
    endpoint = LlmEndpoint(model="m", llm_options={"response_format": {"type": "json_object"}})
    assert "response_format" not in endpoint.llm_options


class Invoice(BaseModel):
    number: str
    total_cents: int


def test_output_as_reads_the_type_whose_schema_was_sent():
    assert schema_of(Invoice) == Invoice.model_json_schema()
    done = RunResult(message_id="m", status="completed", output={"number": "7", "total_cents": 5})
    assert done.output_as(Invoice) == Invoice(number="7", total_cents=5)
    assert RunResult(message_id="m", status="completed", output=[1, 2]).output_as(list[int]) == [
        1,
        2,
    ]
    failed = RunResult(
        message_id="m", status="failed", error=CodedError(code="OUTPUT_INVALID", message="no")
    )
    with pytest.raises(OutputUnavailable) as caught:
        failed.output_as(Invoice)
    assert caught.value.code == "OUTPUT_INVALID"
    with pytest.raises(OutputUnavailable):
        done.model_copy(update={"output": {"number": 1}}).output_as(Invoice)


def test_unset_typed_fields_stay_out_of_payloads():
    assert "output_schema" not in UserMessage(text="x").model_dump_json()
    assert '"output"' not in RunResult(message_id="m", status="completed").model_dump_json()
    assert "structured_output" not in LlmEndpoint(model="m").model_dump_json()
    zero = RunResult(message_id="m", status="completed", output=0).model_dump_json()
    assert RunResult.model_validate_json(zero).output == 0
    retries = RuntimeConfig(output_retries=3).model_dump_json()
    assert '"correct_typed_answer":{"attempts":3}' in retries
    assert "output_retries" not in RuntimeConfig().model_dump_json()
