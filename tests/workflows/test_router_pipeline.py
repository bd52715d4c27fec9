"""The router strategy end to end: scripted model over real HTTP, real worker and store."""

from __future__ import annotations

import json

import pytest

from durable_loop.client.trace import build_trace, decode_run
from durable_loop.core import names
from durable_loop.core.config import RouterConfig, RuntimeConfig
from durable_loop.evals.routing.bench_tools import travel_desk
from durable_loop.testing import reply
from durable_loop.testing.history import EventType, events_of
from tests.conftest import settings_for, unique

ROUTER = RuntimeConfig(loop_strategy="router")


def as_json(value) -> reply.Reply:
    return reply.text(json.dumps(value))


def route(choice, tool=None, question=None) -> reply.Reply:
    return as_json({"choice": choice, "tool": tool, "question": question})


def system_of(request) -> str:
    return request.messages[0]["content"]


async def run(loop_worker, scripted_llm, steps, text, runtime=ROUTER, registry=None):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, steps)
    async with loop_worker(registry or travel_desk()) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=runtime))
        result = await w.sessions.send(sid, text)
        stored = await w.store.read(sid)
        histories = await w.histories(sid)
    return result, stored, scripted_llm.requests(model), histories


async def test_router_executor_tool_summarizer(loop_worker, scripted_llm):
    result, stored, requests, histories = await run(
        loop_worker,
        scripted_llm,
        [
            route("call_tool", "flight_status"),
            as_json({"tool": "flight_status", "args": {"flight_number": "BA117"}}),
            reply.text("BA117 is on time."),
        ],
        "is BA117 on time?",
    )
    assert result.status == "completed", result
    assert result.reply == "BA117 is on time."
    assert [(t.name, t.ok, t.executed) for t in result.tool_calls] == [
        ("flight_status", True, True)
    ]
    trace = result.pipeline
    assert (trace.choice, trace.tool, trace.router_attempts, trace.executor_attempts) == (
        "call_tool",
        "flight_status",
        1,
        1,
    )
    assert trace.router_ms >= 0 and trace.executor_ms >= 0 and trace.repairs == []
    router_req, executor_req, summary_req = requests
    assert all(not r.tool_names for r in requests), "no step sends native tools"
    assert "Tools: weather_forecast, flight_status, package_track, currency_convert" in system_of(
        router_req
    )
    assert "pattern" not in system_of(router_req), "the router sees names only"
    assert '"flight_number"' in system_of(executor_req)
    assert "currency" not in system_of(executor_req), "the executor sees one schema"
    assert "flight_status" in summary_req.messages[-1]["content"]
    assert [(m.seq, m.message.role) for m in stored] == [
        (0, "user"),
        (1, "assistant"),
        (2, "tool"),
        (3, "assistant"),
    ]
    call = stored[1].message.tool_calls[0]
    assert (call.name, json.loads(call.arguments)) == ("flight_status", {"flight_number": "BA117"})
    assert json.loads(stored[2].message.envelope.to_content())["data"]["flight"] == "BA117"
    meta = stored[3].meta["pipeline"]
    assert meta["router_ms"] == trace.router_ms and meta["executor_ms"] == trace.executor_ms
    scheduled = events_of(histories[-1], EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
    kinds = [e.activity_task_scheduled_event_attributes.activity_type.name for e in scheduled]
    assert kinds == ["router_step", "router_step", "run_tool", "router_answer"]


async def test_invalid_router_json_is_repaired_with_one_prompt_quoting_the_error(
    loop_worker, scripted_llm
):
    result, _, requests, _ = await run(
        loop_worker,
        scripted_llm,
        [
            reply.text("You should use the weather tool for Paris!"),
            route("call_tool", "weather_forecast"),
            as_json({"tool": "weather_forecast", "args": {"city": "Paris"}}),
            reply.text("Sunny in Paris."),
        ],
        "weather in paris?",
    )
    assert result.status == "completed" and result.reply == "Sunny in Paris."
    assert result.pipeline.router_attempts == 2
    assert result.pipeline.repairs == [
        "route: INVALID_JSON: no JSON object found in: 'You should use the weather tool for Paris!'"
    ]
    repair = requests[1].messages
    assert repair[-2] == {
        "role": "assistant",
        "content": "You should use the weather tool for Paris!",
    }
    assert (
        "INVALID_JSON" in repair[-1]["content"]
        and "ONLY the corrected JSON" in repair[-1]["content"]
    )


async def test_schema_invalid_arguments_are_repaired(loop_worker, scripted_llm):
    result, stored, requests, _ = await run(
        loop_worker,
        scripted_llm,
        [
            route("call_tool", "currency_convert"),
            as_json(
                {"tool": "currency_convert", "args": {"amount": "50", "from_currency": "euro"}}
            ),
            as_json(
                {
                    "tool": "currency_convert",
                    "args": {"amount": 50, "from_currency": "EUR", "to_currency": "JPY"},
                }
            ),
            reply.text("50 EUR is some yen."),
        ],
        "50 euro to yen",
    )
    assert result.status == "completed", result
    assert result.pipeline.executor_attempts == 2
    (repair,) = result.pipeline.repairs
    assert repair.startswith("execute: SCHEMA_INVALID: args:")
    assert "to_currency" in requests[2].messages[-1]["content"]
    call = stored[1].message.tool_calls[0]
    assert json.loads(call.arguments)["to_currency"] == "JPY"


async def test_clarify_asks_for_the_missing_identifier_without_running_anything(
    loop_worker, scripted_llm
):
    """The clarify is checked by one executor request; its invented tracking id is not the
    user's, so the question stands and nothing runs (patch ``router-clarify-checked``)."""
    result, stored, requests, histories = await run(
        loop_worker,
        scripted_llm,
        [
            route("clarify", "package_track", "What is your tracking number?"),
            as_json({"tool": "package_track", "args": {"tracking_id": "1Z999AA10123"}}),
        ],
        "where is my parcel?",
    )
    assert result.status == "completed"
    assert result.reply == "What is your tracking number?"
    assert result.tool_calls == [] and len(requests) == 2
    assert "package_track" in system_of(requests[1])
    trace = result.pipeline
    assert (trace.choice, trace.tool) == ("clarify", "package_track")
    assert not trace.clarify_overruled
    assert trace.executor_attempts == 1
    assert [m.message.role for m in stored] == ["user", "assistant"]
    markers = events_of(histories[-1], EventType.EVENT_TYPE_MARKER_RECORDED)
    assert any(b"router-clarify-checked" in m.SerializeToString() for m in markers)


@pytest.mark.parametrize(
    ("router", "executor", "text", "tool"),
    [
        # the router asks for the number the message gives; the executor fills it from it
        (
            route("clarify", "flight_status", "What is the flight number?"),
            as_json({"tool": "flight_status", "args": {"flight_number": "BA117"}}),
            "Is flight BA 117 on time?",
            "flight_status",
        ),
        # no tool, but "the tracking number" names tracking_id by its distinctive word; the
        # executor writes bare arguments; no repair request either
        (
            route("clarify", None, "What is the tracking number for your box?"),
            as_json({"tracking_id": "TBA302998114000"}),
            "my amazon box TBA302998114000 - when does it show up?",
            "package_track",
        ),
    ],
)
async def test_a_clarify_for_values_the_message_holds_becomes_the_call(
    loop_worker, scripted_llm, router, executor, text, tool
):
    """Patch ``router-clarify-checked``: one executor request, every required value the
    user's own, and the tool is called instead of asking."""
    result, stored, requests, _ = await run(
        loop_worker, scripted_llm, [router, executor, reply.text("Here it is.")], text
    )
    assert result.status == "completed", result
    assert result.reply == "Here it is." and len(requests) == 3
    assert [c.name for c in result.tool_calls] == [tool] and result.tool_calls[0].ok
    trace = result.pipeline
    assert (trace.choice, trace.tool, trace.clarify_overruled) == ("call_tool", tool, True)
    assert (trace.router_attempts, trace.executor_attempts, trace.repairs) == (1, 1, [])
    assert [m.message.role for m in stored] == ["user", "assistant", "tool", "assistant"]


async def test_a_clarify_check_that_fails_keeps_the_question(loop_worker, scripted_llm):
    """No repair for the check: prose from the executor leaves the router's question."""
    result, _, requests, _ = await run(
        loop_worker,
        scripted_llm,
        [
            route("clarify", "flight_status", "What is the flight number?"),
            reply.text("I need the flight number."),
        ],
        "Is flight BA 117 on time?",
    )
    assert result.status == "completed", result
    assert result.reply == "What is the flight number?" and len(requests) == 2
    assert result.tool_calls == [] and not result.pipeline.clarify_overruled


async def test_a_clarify_naming_the_argument_needs_no_tool_and_no_repair(loop_worker, scripted_llm):
    """The small router's usual clarify leaves "tool" null; its question names
    flight_number, so it is a clarify for flight_status, with no repair request (patch
    ``router-clarify-names-its-argument``)."""
    result, _, requests, _ = await run(
        loop_worker,
        scripted_llm,
        [
            route("clarify", None, "What is the flight number of your flight?"),
            as_json({"tool": "flight_status", "args": {"flight_number": "BA117"}}),
        ],
        "Has my plane landed?",
    )
    assert result.status == "completed", result
    assert result.reply == "What is the flight number of your flight?"
    assert len(requests) == 2 and result.tool_calls == []
    assert (result.pipeline.choice, result.pipeline.tool) == ("clarify", "flight_status")
    assert result.pipeline.router_attempts == 1


async def test_a_toolless_clarify_naming_no_argument_is_none(loop_worker, scripted_llm):
    result, _, requests, _ = await run(
        loop_worker,
        scripted_llm,
        [
            route("clarify", None, "What is a haiku about clouds?"),
            reply.text("Soft clouds drift along."),
        ],
        "Write me a haiku about clouds",
    )
    assert result.status == "completed", result
    assert result.reply == "Soft clouds drift along." and len(requests) == 2
    assert result.pipeline.choice == "none" and result.pipeline.router_attempts == 1
    assert result.pipeline.repairs == ["route: a clarify naming no tool and no argument: none"]


async def test_a_toolless_clarify_whose_check_fails_goes_to_the_repair_prompt(
    loop_worker, scripted_llm
):
    result, _, requests, _ = await run(
        loop_worker,
        scripted_llm,
        [
            route("clarify", None, "What is a tracking number?"),
            as_json({"tool": "package_track", "args": {"tracking_id": "123456789012"}}),
            route("none"),
            reply.text("A tracking number identifies a parcel."),
        ],
        "Explain what a tracking number is",
    )
    assert result.status == "completed", result
    assert result.reply == "A tracking number identifies a parcel." and len(requests) == 4
    trace = result.pipeline
    assert (trace.choice, trace.router_attempts, trace.executor_attempts) == ("none", 2, 1)
    assert not trace.clarify_overruled and len(trace.repairs) == 1


async def test_an_invented_identifier_is_asked_for_instead_of_called(loop_worker, scripted_llm):
    """The router picked a tool although the message gives no flight number, and the
    executor made one up: the call is not run, the reply asks for the number (patch
    ``router-grounded-arguments``)."""
    result, stored, requests, histories = await run(
        loop_worker,
        scripted_llm,
        [
            route("call_tool", "flight_status"),
            as_json({"tool": "flight_status", "args": {"flight_number": "BA123"}}),
        ],
        "Is my flight on time?",
    )
    assert result.status == "completed", result
    assert result.reply == (
        "To use flight_status I need the flight number (IATA flight number, e.g. BA117). "
        "What is it?"
    )
    assert result.tool_calls == [] and len(requests) == 2
    trace = result.pipeline
    assert (trace.choice, trace.tool, trace.ungrounded) == (
        "clarify",
        "flight_status",
        ["flight_number"],
    )
    assert [m.message.role for m in stored] == ["user", "assistant"]
    assert stored[1].meta["mode"] == "clarify"
    scheduled = events_of(histories[-1], EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
    kinds = [e.activity_task_scheduled_event_attributes.activity_type.name for e in scheduled]
    assert kinds == ["router_step", "router_step", "router_answer"]
    markers = events_of(histories[-1], EventType.EVENT_TYPE_MARKER_RECORDED)
    assert any(b"router-grounded-arguments" in m.SerializeToString() for m in markers)


async def test_an_identifier_from_an_earlier_message_is_grounded(loop_worker, scripted_llm):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model,
        [
            route("none"),
            reply.text("Noted."),
            route("call_tool", "package_track"),
            as_json({"tool": "package_track", "args": {"tracking_id": "1Z999AA10123"}}),
            reply.text("In transit."),
        ],
    )
    async with loop_worker(travel_desk()) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=ROUTER))
        await w.sessions.send(sid, "my tracking number is 1Z999AA10123")
        result = await w.sessions.send(sid, "where is it now?")
    assert result.reply == "In transit." and result.tool_calls[0].ok
    assert result.pipeline.ungrounded == []


async def test_clarify_answer_reaches_the_router_as_context(loop_worker, scripted_llm):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model,
        [
            route("clarify", "package_track", "What is your tracking number?"),
            reply.text("no tracking number given"),
            route("call_tool", "package_track"),
            as_json({"tool": "package_track", "args": {"tracking_id": "1Z999AA10123"}}),
            reply.text("In transit."),
        ],
    )
    async with loop_worker(travel_desk()) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=ROUTER))
        await w.sessions.send(sid, "where is my parcel?")
        result = await w.sessions.send(sid, "it's 1Z999AA10123")
    assert result.reply == "In transit." and result.tool_calls[0].ok
    router_prompt = scripted_llm.requests(model)[2].messages[-1]["content"]
    assert "assistant: What is your tracking number?" in router_prompt
    assert router_prompt.endswith("Latest message: it's 1Z999AA10123")


async def test_none_is_answered_directly_without_tools(loop_worker, scripted_llm):
    result, stored, requests, _ = await run(
        loop_worker,
        scripted_llm,
        [route("none"), reply.text("Exchange rates float with supply and demand.")],
        "why do exchange rates change?",
    )
    assert result.status == "completed"
    assert result.reply == "Exchange rates float with supply and demand."
    assert result.tool_calls == [] and result.pipeline.executor_attempts == 0
    assert requests[1].messages[-1]["content"] == "why do exchange rates change?"
    assert [m.message.role for m in stored] == ["user", "assistant"]


async def test_unrepairable_output_fails_with_a_code(loop_worker, scripted_llm):
    result, _, requests, _ = await run(
        loop_worker,
        scripted_llm,
        [reply.text("weather!"), reply.text("still not json")],
        "weather in oslo",
    )
    assert result.status == "failed"
    assert result.error.code == "ROUTER_INVALID_OUTPUT"
    assert len(requests) == 2 and len(result.pipeline.repairs) == 2


async def test_without_summarizer_the_tool_output_is_the_reply(loop_worker, scripted_llm):
    runtime = RuntimeConfig(loop_strategy="router", router=RouterConfig(summarize=False))
    result, _, requests, _ = await run(
        loop_worker,
        scripted_llm,
        [
            route("call_tool", "package_track"),
            as_json({"tool": "package_track", "args": {"tracking_id": "JD014600003"}}),
        ],
        "track JD014600003",
        runtime=runtime,
    )
    assert result.status == "completed" and len(requests) == 2
    assert json.loads(result.reply)["data"]["tracking_id"] == "JD014600003"


async def test_masked_tools_are_not_offered_to_the_router(loop_worker, scripted_llm):
    runtime = RuntimeConfig(loop_strategy="router", tool_denylist=["currency_convert"])
    result, _, requests, _ = await run(
        loop_worker,
        scripted_llm,
        [route("call_tool", "currency_convert"), route("none"), reply.text("I cannot convert.")],
        "100 usd in eur",
        runtime=runtime,
    )
    assert "currency_convert" not in system_of(requests[0])
    assert result.pipeline.repairs and result.pipeline.choice == "none"
    assert result.tool_calls == []


async def test_the_session_trace_carries_router_and_executor_ms(loop_worker, scripted_llm):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model,
        [
            route("call_tool", "weather_forecast"),
            as_json({"tool": "weather_forecast", "args": {"city": "Oslo", "days": 2}}),
            reply.text("Showers in Oslo."),
        ],
    )
    async with loop_worker(travel_desk()) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=ROUTER))
        result = await w.sessions.send(sid, "oslo weather, 2 days")
        runs = [decode_run(h.events, h.run_id, i) for i, h in enumerate(await w.histories(sid))]
        stored = await w.store.read(sid)
    trace = build_trace(sid, names.session_workflow_id(sid), runs, stored)
    (traced,) = trace.message_results
    assert traced.pipeline == result.pipeline
    assert traced.pipeline.router_ms == result.pipeline.router_ms
    assert traced.pipeline.executor_ms == result.pipeline.executor_ms
    assert [r.input.name for r in runs[0].tool_runs] == ["weather_forecast"]
