"""Typed final answers (``output_schema``) end to end on each provider shape: the first
answer is invalid, the loop sends the validation errors back, the second one is kept in
``RunResult.output``. Every session is replayed on teardown (``loop_worker``)."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel
from temporalio.client import WorkflowUpdateFailedError

from durable_loop.client.refusals import refusal_of
from durable_loop.core.config import LoopStrategy, RuntimeConfig, SessionSettings
from durable_loop.core.contracts import UserMessage
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.typed_output.parse import OutputUnavailable
from durable_loop.testing import reply
from durable_loop.testing import reply_anthropic as anthropic
from durable_loop.testing import reply_gemini as gemini
from durable_loop.workflows.typed_answers import output_schema_refusal
from tests.conftest import FAST_RETRY, settings_for, unique
from tests.workflows.approval_kit import Payments, approval_settings, payload_text
from tests.workflows.toolkit import ToolLog, recording_tools

CITY = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
    "required": ["city", "population"],
}


class Invoice(BaseModel):
    number: str
    total_cents: int
    paid: bool = False


def provider_settings(scripted_llm, model: str, provider: str, **kw):
    settings = settings_for(scripted_llm, model, **kw)
    endpoint = LlmEndpoint(
        provider=provider,
        model=model,
        base_url=scripted_llm.base_url,
        api_key_env="TYPED_TEST_KEY",
        timeout_s=10.0,
        retry=FAST_RETRY,
    )
    return settings.model_copy(update={"llm": endpoint})


async def run_typed(loop_worker, settings, text="Which city?", schema=CITY, log=None):
    sid = unique("typed")
    registry = recording_tools(log or ToolLog())
    async with loop_worker(registry, environ={"TYPED_TEST_KEY": "k"}) as w:
        await w.sessions.start(sid, settings)
        result = await w.sessions.send(sid, text, output_schema=schema)
        stored = await w.store.read(sid)
    return result, stored


async def test_openai_compatible_native_response_format(loop_worker, scripted_llm):
    model = unique("oai")
    scripted_llm.script(
        model,
        [
            reply.text('{"city": "Oslo", "population": "many"}'),
            reply.text('{"city": "Oslo", "population": 709000}'),
        ],
    )
    result, stored = await run_typed(loop_worker, settings_for(scripted_llm, model))

    assert result.status == "completed", result
    assert result.output == {"city": "Oslo", "population": 709000}
    assert result.turns == 2 and result.output_corrections == 1
    first, second = scripted_llm.requests(model)
    assert first.body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "final_answer", "schema": CITY, "strict": False},
    }
    assert "final_answer" not in first.tool_names
    correction = second.messages[-1]
    assert correction["role"] == "user" and "at /population" in correction["content"]
    assert "'many' is not of type 'integer'" in correction["content"]
    assert stored[-1].message.content == '{"city": "Oslo", "population": 709000}'


async def test_anthropic_final_answer_tool_beside_real_tools(loop_worker, scripted_llm):
    model, log = unique("claude"), ToolLog()
    scripted_llm.script(
        model,
        [
            anthropic.tool_call("add", {"a": 700000, "b": 9000}, "toolu_add"),
            anthropic.tool_call("final_answer", {"city": "Oslo"}, "toolu_f1"),
            anthropic.tool_call("final_answer", {"city": "Oslo", "population": 709000}, "toolu_f2"),
        ],
    )
    settings = provider_settings(scripted_llm, model, "anthropic")
    result, stored = await run_typed(loop_worker, settings, log=log)

    assert result.status == "completed", result
    assert result.output == {"city": "Oslo", "population": 709000}
    assert [e.name for e in log.executions] == ["add"]
    assert [c.name for c in result.tool_calls] == ["add"]
    requests = scripted_llm.requests(model)
    assert len(requests) == 3
    tools = {t["name"]: t for t in requests[0].body["tools"]}
    assert tools["final_answer"]["input_schema"] == CITY and "add" in tools
    assert requests[0].body["tool_choice"] == {"type": "any"}
    # The final-answer call is stored as the reply's JSON text: no unpaired tool_use.
    second_turn = requests[2].body["messages"]
    assert second_turn[-2] == {
        "role": "assistant",
        "content": [{"type": "text", "text": '{"city":"Oslo"}'}],
    }
    assert "population" in second_turn[-1]["content"][0]["text"]
    assert json.loads(stored[-1].message.content) == result.output
    assert stored[-1].message.tool_calls == []


async def test_anthropic_non_object_schema_is_wrapped(loop_worker, scripted_llm):
    model = unique("claude")
    schema = {"type": "array", "items": {"type": "integer"}}
    scripted_llm.script(model, [anthropic.tool_call("final_answer", {"value": [1, 2, 3]})])
    settings = provider_settings(
        scripted_llm, model, "anthropic", runtime=RuntimeConfig(tool_allowlist=[])
    )
    result, _ = await run_typed(loop_worker, settings, schema=schema)

    assert result.status == "completed" and result.output == [1, 2, 3]
    (request,) = scripted_llm.requests(model)
    assert request.body["tool_choice"] == {"type": "tool", "name": "final_answer"}
    assert request.body["tools"][0]["input_schema"]["properties"]["value"] == schema


async def test_gemini_native_response_schema_without_tools(loop_worker, scripted_llm):
    model = unique("gemini")
    scripted_llm.script(
        model,
        [
            gemini.text("Oslo, about 700k people"),
            gemini.text('{"city":"Oslo","population":709000}'),
        ],
    )
    settings = provider_settings(
        scripted_llm, model, "gemini", runtime=RuntimeConfig(tool_allowlist=[])
    )
    result, _ = await run_typed(loop_worker, settings)

    assert result.status == "completed", result
    assert result.output == {"city": "Oslo", "population": 709000}
    first, second = scripted_llm.requests(model)
    assert first.body["generationConfig"] == {
        "responseMimeType": "application/json",
        "responseJsonSchema": CITY,
    }
    assert "tools" not in first.body
    assert "not valid JSON" in second.body["contents"][-1]["parts"][0]["text"]


async def test_gemini_with_tools_uses_the_final_answer_tool(loop_worker, scripted_llm):
    model = unique("gemini")
    scripted_llm.script(
        model,
        [
            gemini.function_call("final_answer", {"city": 7, "population": 1}),
            gemini.function_call("final_answer", {"city": "Oslo", "population": 709000}),
        ],
    )
    result, _ = await run_typed(loop_worker, provider_settings(scripted_llm, model, "gemini"))

    assert result.status == "completed" and result.output["city"] == "Oslo"
    first, _ = scripted_llm.requests(model)
    assert "generationConfig" not in first.body
    names_sent = [d["name"] for d in first.body["tools"][0]["functionDeclarations"]]
    assert "final_answer" in names_sent and "add" in names_sent
    assert first.body["toolConfig"] == {"functionCallingConfig": {"mode": "ANY"}}


async def test_an_endpoint_without_native_support_gets_the_tool(loop_worker, scripted_llm):
    model = unique("local")
    scripted_llm.script(model, [reply.tool_call("final_answer", {"city": "Oslo", "population": 1})])
    settings = settings_for(scripted_llm, model)
    llm = settings.llm.model_copy(update={"structured_output": "tool"})
    result, _ = await run_typed(loop_worker, settings.model_copy(update={"llm": llm}))

    assert result.status == "completed" and result.output == {"city": "Oslo", "population": 1}
    (request,) = scripted_llm.requests(model)
    assert "response_format" not in request.body
    assert "final_answer" in request.tool_names and request.body["tool_choice"] == "required"


async def test_corrections_exhausted_fail_with_output_invalid(loop_worker, scripted_llm):
    model = unique("oai")
    scripted_llm.script(model, [reply.text("not json"), reply.text('{"city": "Oslo"}')])
    settings = settings_for(scripted_llm, model, runtime=RuntimeConfig(output_retries=1))
    result, _ = await run_typed(loop_worker, settings)

    assert result.status == "failed" and result.error.code == "OUTPUT_INVALID"
    assert "'population' is a required property" in result.error.message
    assert result.output is None and result.turns == 2 and result.output_corrections == 1
    with pytest.raises(OutputUnavailable) as caught:
        result.output_as(dict)
    assert caught.value.code == "OUTPUT_INVALID"


async def test_pydantic_model_round_trip_through_the_client(loop_worker, scripted_llm):
    model, sid = unique("oai"), unique("typed")
    scripted_llm.script(
        model, [reply.text('```json\n{"number": "INV-7", "total_cents": 1250}\n```')]
    )
    async with loop_worker(recording_tools(ToolLog())) as w:
        result = await w.sessions.start_and_send(
            sid, settings_for(scripted_llm, model), "Read the invoice", output_type=Invoice
        )
    (request,) = scripted_llm.requests(model)
    assert request.body["response_format"]["json_schema"]["schema"] == Invoice.model_json_schema()
    invoice = result.output_as(Invoice)
    assert invoice == Invoice(number="INV-7", total_cents=1250)


async def test_invalid_schema_is_refused_before_it_is_admitted(loop_worker, scripted_llm):
    model, sid = unique("oai"), unique("typed")
    scripted_llm.script(model, [reply.text("hi")])
    async with loop_worker(recording_tools(ToolLog())) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        with pytest.raises(WorkflowUpdateFailedError) as caught:
            await w.sessions.send(sid, "x", output_schema={"type": "objekt"})
        await w.sessions.post(sid, "y", message_id="posted", output_schema={"required": 3})
        posted = await w.sessions.message_result(sid, "posted")
        status = await w.sessions.status(sid)
        later = await w.sessions.send(sid, "still there?")

    refusal = refusal_of(caught.value)
    assert refusal is not None and refusal.code == "INVALID_SETTING"
    assert "not a valid JSON Schema" in refusal.message
    assert posted.status == "failed" and posted.error.code == "INVALID_SETTING"
    assert status.queued_messages == 0 and status.messages_done == 0
    assert later.reply == "hi" and len(scripted_llm.requests(model)) == 1


async def test_messages_without_a_schema_carry_no_new_fields(loop_worker, scripted_llm):
    model, sid = unique("oai"), unique("plain")
    scripted_llm.script(model, [reply.text("hi")])
    async with loop_worker(recording_tools(ToolLog())) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        await w.sessions.send(sid, "hello")
        text = payload_text(await w.histories(sid))
    assert '"text":"hello"' in text
    for new_field in ("output_schema", '"output"', "output_retries", "structured_output"):
        assert new_field not in text
    assert "typed-output" not in text


async def test_a_typed_message_parked_on_an_approval_keeps_its_schema(
    loop_worker, scripted_llm, temporal_env
):
    model, sid, payments = unique("oai"), unique("typed"), Payments()
    scripted_llm.script(
        model,
        [
            reply.tool_call("pay", {"amount": 250, "to": "acme"}, "c1"),
            reply.text("Paid 250 to acme."),
            reply.text('{"paid": 250, "to": "acme"}'),
        ],
    )
    schema = {"type": "object", "required": ["paid", "to"]}
    async with loop_worker(payments.registry()) as w:
        await w.sessions.start(sid, approval_settings(scripted_llm, model, temporal_env))
        first = await w.sessions.send(sid, "pay acme", output_schema=schema)
        await w.sessions.confirm_tool_call(sid, "c1", "alice")
        final = await w.sessions.message_result(sid, first.message_id)
        text = payload_text(await w.histories(sid))
    # the schema outlived the wait: the prose answer after the approval was sent back
    assert first.status == "awaiting_approval" and first.output is None
    assert final.status == "completed", final
    assert final.output == {"paid": 250, "to": "acme"} and final.turns == 3
    assert [a for a, _, _ in payments.made] == [250]
    assert "typed-output" in text


def test_the_session_refuses_schemas_it_cannot_honour():
    plain = SessionSettings(llm=LlmEndpoint(model="m"))
    router = plain.model_copy(update={"runtime": RuntimeConfig(loop_strategy=LoopStrategy.ROUTER)})
    assert output_schema_refusal(UserMessage(text="x"), router) is None
    assert output_schema_refusal(UserMessage(text="x", output_schema=CITY), plain) is None
    refused = output_schema_refusal(UserMessage(text="x", output_schema=CITY), router)
    assert refused is not None and "loop_strategy=router" in refused
    bad = UserMessage(text="x", output_schema={"type": 1})
    assert "not a valid JSON Schema" in (output_schema_refusal(bad, plain) or "")
