"""The route decision as a table: recorded model outputs (from the pipeline's tests and
``tests/histories/router_clarify.run0.json``) through :func:`advance`, one row per way
through the pipeline, with the requests made, the patches asked about and what the trace
reports."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest

from durable_loop.core.errors import ErrorCode
from durable_loop.core.router.contracts import RepairNote
from durable_loop.core.router.protocol import ExecutorCall
from durable_loop.core.router.step import (
    CLARIFY_CHECKED_PATCH,
    CLARIFY_NAMED_ARGUMENT_PATCH,
    GROUNDED_ARGUMENTS_PATCH,
    TOOLLESS_CLARIFY_NOTE,
    Action,
    Answer,
    AskExecutor,
    AskRouter,
    CheckPatch,
    Fail,
    ModelOutput,
    RouteState,
    RunCall,
    advance,
    shown_to_executor,
    with_patch,
)
from durable_loop.core.tools import ToolSpec
from durable_loop.evals.routing.bench_tools import travel_desk
from tests.workflows.toolkit import ToolLog, recording_tools

TRAVEL = travel_desk().specs()
RECORDING = recording_tools(ToolLog()).specs()  # the tools of tests/histories/record.py
NAMED, CHECKED, GROUNDED = (
    CLARIFY_NAMED_ARGUMENT_PATCH,
    CLARIFY_CHECKED_PATCH,
    GROUNDED_ARGUMENTS_PATCH,
)
CUT = "\x00cut"  # marks an output the activity truncated at max_output_bytes


def route(choice: str, tool: str | None = None, question: str | None = None) -> str:
    return json.dumps({"choice": choice, "tool": tool, "question": question})


def call(tool: str, **args: object) -> str:
    return json.dumps({"tool": tool, "args": args})


@dataclass
class Row:
    message: str
    outputs: list[str]
    final: Action
    asks: list[str]
    checked: list[str] = field(default_factory=list)
    trace: dict[str, object] = field(default_factory=dict)
    specs: list[ToolSpec] = field(default_factory=lambda: TRAVEL)
    earlier: list[str] = field(default_factory=list)
    patches: dict[str, bool] = field(default_factory=dict)  # unlisted: applies
    tools_on: bool = True


def drive(row: Row) -> tuple[Action, RouteState, list[str], list[str]]:
    """Carry the step out as the workflow does, answering each request with the next
    recorded output and each patch check from the row."""
    state = RouteState(
        specs=row.specs,
        said=shown_to_executor(row.message, row.earlier, 2),
        tools_on=row.tools_on,
    )
    outputs, asked, checked = iter(row.outputs), [], []
    output: ModelOutput | None = None
    while True:
        step = advance(state, output)
        state, action = step.state, step.action
        if isinstance(action, CheckPatch):
            checked.append(action.patch)
            state = with_patch(state, action.patch, row.patches.get(action.patch, True))
            continue
        if not isinstance(action, AskRouter | AskExecutor):
            assert next(outputs, None) is None, "every recorded output is read"
            return action, state, asked, checked
        kind = "route" if isinstance(action, AskRouter) else "execute"
        asked.append("check" if isinstance(action, AskExecutor) and action.check else kind)
        text = next(outputs)
        output = ModelOutput(text=text.removesuffix(CUT), truncated=text.endswith(CUT))


PARCEL = "my amazon box TBA302998114000 - when does it show up?"
ROWS = {
    # ---------------------------------------------------------------- answer directly
    "none": Row(
        "why do exchange rates change?",
        [route("none")],
        Answer(mode="answer"),
        ["route"],
        trace={"choice": "none"},
    ),
    "no tools visible: no router request": Row(
        "hello", [], Answer(mode="answer"), [], specs=[], trace={"choice": "none"}
    ),
    "tool use disabled: no router request": Row(
        "hello", [], Answer(mode="answer"), [], tools_on=False, trace={"choice": "none"}
    ),
    "clarify naming nothing read as none": Row(
        "Write me a haiku about clouds",
        [route("clarify", None, "What is a haiku about clouds?")],
        Answer(mode="answer"),
        ["route"],
        [CHECKED],
        {"choice": "none", "repairs": [TOOLLESS_CLARIFY_NOTE]},
    ),
    "clarify naming nothing read as none (router_clarify m3: 'a' names no argument)": Row(
        "write a haiku about sums",
        [route("clarify", None, "What is a haiku?")],
        Answer(mode="answer"),
        ["route"],
        [NAMED, CHECKED],
        {"choice": "none", "repairs": [TOOLLESS_CLARIFY_NOTE]},
        specs=RECORDING,
    ),
    "a toolless clarify whose check fails is repaired": Row(
        "Explain what a tracking number is",
        [
            route("clarify", None, "What is a tracking number?"),
            call("package_track", tracking_id="123456789012"),
            route("none"),
        ],
        Answer(mode="answer"),
        ["route", "check", "route"],
        [CHECKED],
        {"choice": "none", "clarify_overruled": False},
    ),
    # ---------------------------------------------------------------- ask (clarify)
    "clarify kept: the check invents the id": Row(
        "where is my parcel?",
        [
            route("clarify", "package_track", "What is your tracking number?"),
            call("package_track", tracking_id="1Z999AA10123"),
        ],
        Answer(mode="clarify", question="What is your tracking number?"),
        ["route", "check"],
        [CHECKED],
        {"choice": "clarify", "tool": "package_track", "clarify_overruled": False},
    ),
    "clarify kept: the check answers in prose": Row(
        "Is flight BA 117 on time?",
        [
            route("clarify", "flight_status", "What is the flight number?"),
            "I need the flight number.",
        ],
        Answer(mode="clarify", question="What is the flight number?"),
        ["route", "check"],
        [CHECKED],
    ),
    "clarify kept: the check was cut": Row(
        "Is flight BA 117 on time?",
        [
            route("clarify", "flight_status", "What is the flight number?"),
            call("flight_status", flight_number="BA117") + CUT,
        ],
        Answer(mode="clarify", question="What is the flight number?"),
        ["route", "check"],
        [CHECKED],
    ),
    "clarify kept (router_clarify m2: 7 is nobody's)": Row(
        "add two numbers",
        [route("clarify", "add", "Which numbers?"), call("add", a=1, b=7)],
        Answer(mode="clarify", question="Which numbers?"),
        ["route", "check"],
        [CHECKED],
        specs=RECORDING,
        earlier=["add 2 and 3", "2 + 3 is 5.", "add two numbers"],
    ),
    "a clarify naming its argument needs no tool": Row(
        "Has my plane landed?",
        [
            route("clarify", None, "What is the flight number of your flight?"),
            call("flight_status", flight_number="BA117"),
        ],
        Answer(mode="clarify", question="What is the flight number of your flight?"),
        ["route", "check"],
        [NAMED, CHECKED],
        {"choice": "clarify", "tool": "flight_status"},
    ),
    "an invented identifier is asked for": Row(
        "Is my flight on time?",
        [route("call_tool", "flight_status"), call("flight_status", flight_number="BA123")],
        Answer(
            mode="clarify",
            question="To use flight_status I need the flight number "
            "(IATA flight number, e.g. BA117). What is it?",
        ),
        ["route", "execute"],
        [GROUNDED],
        {"choice": "clarify", "tool": "flight_status", "ungrounded": ["flight_number"]},
    ),
    "before router-clarify-checked a clarify is not checked": Row(
        "Is flight BA 117 on time?",
        [route("clarify", "flight_status", "What is the flight number?")],
        Answer(mode="clarify", question="What is the flight number?"),
        ["route"],
        [CHECKED],
        patches={CHECKED: False},
    ),
    # ---------------------------------------------------------------- run the call
    "call": Row(
        "is BA117 on time?",
        [route("call_tool", "flight_status"), call("flight_status", flight_number="BA117")],
        RunCall(call=ExecutorCall(tool="flight_status", args={"flight_number": "BA117"})),
        ["route", "execute"],
        trace={"choice": "call_tool", "tool": "flight_status", "repairs": []},
    ),
    "clarify overruled: the message holds the number": Row(
        "Is flight BA 117 on time?",
        [
            route("clarify", "flight_status", "What is the flight number?"),
            call("flight_status", flight_number="BA117"),
        ],
        RunCall(call=ExecutorCall(tool="flight_status", args={"flight_number": "BA117"})),
        ["route", "check"],
        [CHECKED],
        {"choice": "call_tool", "tool": "flight_status", "clarify_overruled": True},
    ),
    "clarify overruled (router_clarify m1)": Row(
        "add 2 and 3",
        [route("clarify", "add", "Which numbers?"), call("add", a=2, b=3)],
        RunCall(call=ExecutorCall(tool="add", args={"a": 2, "b": 3})),
        ["route", "check"],
        [CHECKED],
        {"choice": "call_tool", "tool": "add", "clarify_overruled": True},
        specs=RECORDING,
    ),
    "a rescued toolless clarify overruled by bare arguments": Row(
        PARCEL,
        [
            route("clarify", None, "What is the tracking number for your box?"),
            json.dumps({"tracking_id": "TBA302998114000"}),
        ],
        RunCall(call=ExecutorCall(tool="package_track", args={"tracking_id": "TBA302998114000"})),
        ["route", "check"],
        [CHECKED],
        {"choice": "call_tool", "tool": "package_track", "clarify_overruled": True, "repairs": []},
    ),
    "an identifier from an earlier message is grounded": Row(
        "where is it now?",
        [route("call_tool", "package_track"), call("package_track", tracking_id="1Z999AA10123")],
        RunCall(call=ExecutorCall(tool="package_track", args={"tracking_id": "1Z999AA10123"})),
        ["route", "execute"],
        trace={"ungrounded": []},
        earlier=["my tracking number is 1Z999AA10123", "Noted.", "where is it now?"],
    ),
    "before router-grounded-arguments an invented identifier is called": Row(
        "Is my flight on time?",
        [route("call_tool", "flight_status"), call("flight_status", flight_number="BA123")],
        RunCall(call=ExecutorCall(tool="flight_status", args={"flight_number": "BA123"})),
        ["route", "execute"],
        [GROUNDED],
        {"choice": "call_tool", "ungrounded": []},
        patches={GROUNDED: False},
    ),
    "invalid router JSON repaired": Row(
        "weather in paris?",
        [
            "You should use the weather tool for Paris!",
            route("call_tool", "weather_forecast"),
            call("weather_forecast", city="Paris"),
        ],
        RunCall(call=ExecutorCall(tool="weather_forecast", args={"city": "Paris"})),
        ["route", "route", "execute"],
        trace={
            "repairs": [
                "route: INVALID_JSON: no JSON object found in: "
                "'You should use the weather tool for Paris!'"
            ]
        },
    ),
    "schema-invalid arguments repaired": Row(
        "50 euro to yen",
        [
            route("call_tool", "currency_convert"),
            call("currency_convert", amount="50", from_currency="euro"),
            call("currency_convert", amount=50, from_currency="EUR", to_currency="JPY"),
        ],
        RunCall(
            call=ExecutorCall(
                tool="currency_convert",
                args={"amount": 50, "from_currency": "EUR", "to_currency": "JPY"},
            )
        ),
        ["route", "execute", "execute"],
    ),
    "a cut executor output repaired": Row(
        "is BA117 on time?",
        [
            route("call_tool", "flight_status"),
            call("flight_status", flight_number="BA117") + CUT,
            call("flight_status", flight_number="BA117"),
        ],
        RunCall(call=ExecutorCall(tool="flight_status", args={"flight_number": "BA117"})),
        ["route", "execute", "execute"],
        trace={"repairs": ["execute: SCHEMA_INVALID: the output is too long"]},
    ),
    "before the clarify patches a toolless clarify is repaired": Row(
        "write a haiku about sums",
        [route("clarify", None, "What is a haiku?"), route("none")],
        Answer(mode="answer"),
        ["route", "route"],
        [NAMED, CHECKED],
        {"choice": "none"},
        specs=RECORDING,
        patches={NAMED: False, CHECKED: False},
    ),
    # ---------------------------------------------------------------- fail
    "unrepairable router output": Row(
        "weather in oslo",
        ["weather!", "still not json"],
        Fail(
            code=ErrorCode.ROUTER_INVALID_OUTPUT,
            message="the route step gave no valid output after repair: "
            "INVALID_JSON: no JSON object found in: 'still not json'",
        ),
        ["route", "route"],
        trace={"choice": None},
    ),
    "router output cut twice": Row(
        "weather in oslo",
        [route("none") + CUT, route("none") + CUT],
        Fail(
            code=ErrorCode.ROUTER_INVALID_OUTPUT,
            message="the route step gave no valid output after repair: "
            "SCHEMA_INVALID: the output is too long",
        ),
        ["route", "route"],
    ),
    "unrepairable executor output": Row(
        "weather in oslo",
        [route("call_tool", "weather_forecast"), "Oslo", "{}"],
        Fail(
            code=ErrorCode.EXECUTOR_INVALID_OUTPUT,
            message="the execute step gave no valid output after repair: "
            "SCHEMA_INVALID: (root): 'tool' is a required property; "
            "(root): 'args' is a required property",
        ),
        ["route", "execute", "execute"],
        trace={"choice": "call_tool", "tool": "weather_forecast"},
    ),
}


@pytest.mark.parametrize("name", list(ROWS))
def test_the_route_decision(name: str) -> None:
    row = ROWS[name]
    final, state, asked, checked = drive(row)
    assert final == row.final
    assert asked == row.asks
    assert checked == row.checked, "patches are asked about only where a rule needs them"
    for key, value in row.trace.items():
        assert getattr(state, key) == value, key


def test_the_decision_kinds_each_have_several_rows() -> None:
    kinds = [(type(r.final).__name__, getattr(r.final, "mode", "")) for r in ROWS.values()]
    for kind in [("Answer", "answer"), ("Answer", "clarify"), ("RunCall", ""), ("Fail", "")]:
        assert kinds.count(kind) >= 3, kind


def test_a_repair_quotes_the_output_and_its_error() -> None:
    state = RouteState(specs=TRAVEL, said=["weather in oslo"])
    asked = advance(state)
    step = advance(asked.state, ModelOutput(text="weather!"))
    assert step.action == AskRouter(
        repair=RepairNote(
            previous_output="weather!",
            error="INVALID_JSON: no JSON object found in: 'weather!'",
        )
    )
    assert step.state.attempt == 2


def test_routing_only_checks_no_clarify_and_stops_at_the_executor() -> None:
    state = RouteState(specs=TRAVEL, said=["Is flight BA 117 on time?"], route_only=True)
    clarify = route("clarify", "flight_status", "What is the flight number?")
    step = advance(advance(state).state, ModelOutput(text=clarify))
    assert step.action == Answer(mode="clarify", question="What is the flight number?")
    step = advance(advance(state).state, ModelOutput(text=route("call_tool", "flight_status")))
    assert step.action == AskExecutor(tool="flight_status")
    named = route("clarify", None, "What is the tracking number for your box?")
    asked = advance(advance(state).state, ModelOutput(text=named))
    assert asked.action == CheckPatch(patch=CHECKED)
    step = advance(with_patch(asked.state, CHECKED, True), ModelOutput(text=named))
    assert isinstance(step.action, AskRouter) and step.action.repair, "no check: a repair"


def test_a_patch_check_leaves_the_output_to_be_read_again() -> None:
    state = advance(RouteState(specs=TRAVEL, said=["where is my parcel?"])).state
    output = ModelOutput(text=route("clarify", "package_track", "What is your tracking number?"))
    asked = advance(state, output)
    assert asked.action == CheckPatch(patch=CHECKED) and asked.state.phase == "route"
    step = advance(with_patch(asked.state, CHECKED, True), output)
    assert step.action == AskExecutor(tool="package_track", check=True)


def test_last_failure_is_the_reading_of_the_last_output() -> None:
    """What the benchmark records per output: a rescue's failed check is the check's own
    failure, though the repair then quotes the router's."""
    state = advance(RouteState(specs=TRAVEL, said=["Explain what a tracking number is"])).state
    state = with_patch(state, CHECKED, True)
    rescue = advance(state, ModelOutput(text=route("clarify", None, "What is a tracking number?")))
    assert rescue.action == AskExecutor(tool="package_track", check=True)
    assert rescue.state.last_failure is not None
    assert rescue.state.last_failure.code == ErrorCode.SCHEMA_INVALID
    step = advance(rescue.state, ModelOutput(text="I cannot tell."))
    assert step.state.last_failure is not None
    assert step.state.last_failure.code == ErrorCode.INVALID_JSON
    assert isinstance(step.action, AskRouter) and step.action.repair is not None
    assert step.action.repair.error.startswith("SCHEMA_INVALID: clarify is only for a lookup")
