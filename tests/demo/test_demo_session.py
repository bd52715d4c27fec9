"""The demo session end to end on the time-skipping server, a scripted model playing the
1.5B model: the same tools, the same settings, the same checks as `durable-loop demo`."""

from __future__ import annotations

import functools

from durable_loop.cli.model_fetch import variant_of
from durable_loop.core.config import SessionSettings
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.demo.session import STEPS, DemoStep, demo_settings, run_demo_session
from durable_loop.demo.tools import Notebook, demo_registry
from durable_loop.testing import reply
from tests.conftest import settings_for, unique
from tests.demo.small_model import is_gate, small_model

LOCAL_MODEL = LlmEndpoint(model=variant_of("1.5b").alias)


def demo_settings_on(scripted_llm, model: str) -> SessionSettings:
    """The demo's settings for the local 1.5B model, pointed at the scripted endpoint."""
    return demo_settings(LOCAL_MODEL).model_copy(
        update={"llm": settings_for(scripted_llm, model).llm}
    )


async def test_demo_flow_passes_with_a_small_model(loop_worker, scripted_llm):
    model, notebook, lines = unique("qwen-demo"), Notebook(), []
    scripted_llm.script(model, [], then=small_model)
    async with loop_worker(demo_registry(notebook)) as w:
        sid = unique("demo")
        report = await run_demo_session(
            w.sessions, w.store, notebook, sid, demo_settings_on(scripted_llm, model), lines.append
        )
    assert report.passed, report.checks
    assert report.workflow_id == f"session-{sid}"
    first, second = report.results
    assert first.reply == "The result of 23 * 19 + 4 is 441."
    # the note carries the result: the answer is asked for before the unasked note_list
    assert [t.name for t in first.tool_calls] == ["calculate", "note_add"]
    assert first.turns == 3 and first.recoveries == ["finalize_when_done"]
    assert second.reply == "Your notes: 23 * 19 + 4 = 441"
    assert [n.text for n in notebook.notes(sid)] == ["23 * 19 + 4 = 441"]
    assert len(report.llm_ms) == 5 and len(report.seconds) == 2

    everything = scripted_llm.requests(model)
    gates = [r for r in everything if is_gate(r)]
    assert [everything.index(g) for g in gates] == [0, 4]  # before each message's first turn
    requests = [r for r in everything if not is_gate(r)]
    with_tools = [r for r in requests if "tools" in r.body]
    assert all(r.body["parallel_tool_calls"] is False for r in with_tools)
    assert all(r.body["temperature"] == 0 for r in everything)
    assert all(r.messages[0]["role"] == "user" for r in requests), "no system prompt"
    finalization = requests[2]
    assert "tools" not in finalization.body
    assert finalization.messages[-1]["content"].startswith("No more tools will run")
    assert requests[1].messages[-1]["content"] == '{"data":441,"ok":true}'

    assert lines[0] == f"you: {STEPS[0].text}"
    assert "      calculate → 441" in lines
    assert any(line.startswith("  session turn 3") and "(no tools)" in line for line in lines)
    assert "assistant: The result of 23 * 19 + 4 is 441." in lines


async def test_repeated_call_is_answered_from_its_recorded_result(loop_worker, scripted_llm):
    model, notebook, lines = unique("qwen-demo"), Notebook(), []
    scripted_llm.script(model, [], then=functools.partial(small_model, repeating=True))
    # "then" asks for a second call, so the tools stay on after the first (finalize_when_done)
    steps = [DemoStep(text="What is 23 * 19 + 4? Then tell me.", expect="441")]
    async with loop_worker(demo_registry(notebook)) as w:
        report = await run_demo_session(
            w.sessions,
            w.store,
            notebook,
            unique("demo"),
            demo_settings_on(scripted_llm, model),
            lines.append,
            steps,
        )
    assert report.passed, report.checks
    (result,) = report.results
    assert [(t.name, t.executed, t.reused) for t in result.tool_calls] == [
        ("calculate", True, False),
        ("calculate", False, True),
    ]
    third = [r for r in scripted_llm.requests(model) if not is_gate(r)][2]
    assert "tools" not in third.body
    assert any("repeated identical call" in line for line in lines)


async def test_a_wrong_answer_fails_the_demo(loop_worker, scripted_llm):
    model, notebook = unique("qwen-demo"), Notebook()
    scripted_llm.script(model, [], then=reply.text("It is 437."))
    async with loop_worker(demo_registry(notebook)) as w:
        report = await run_demo_session(
            w.sessions,
            w.store,
            notebook,
            unique("demo"),
            demo_settings_on(scripted_llm, model),
            lambda line: None,
        )
    assert not report.passed
    failed = [c.name for c in report.checks if not c.ok]
    assert failed == ["reply 1 states 441", "reply 2 states 441", "a note holding 441 was saved"]
    assert [c.detail for c in report.checks if c.name == "a note holding 441 was saved"] == [
        "no notes"
    ]


async def test_a_slow_model_turn_outlives_the_heartbeat_timeout(loop_worker, scripted_llm):
    """CPU models take many seconds per turn: the LLM activity heartbeats while it waits."""
    model, notebook = unique("qwen-demo"), Notebook()
    slow_first = functools.partial(slow_reply, small_model, seconds=2.5)
    scripted_llm.script(model, [small_model, slow_first], then=small_model)  # gate, turn 1
    base = demo_settings_on(scripted_llm, model)
    settings = base.model_copy(
        update={"runtime": base.runtime.model_copy(update={"heartbeat_timeout_s": 1.0})}
    )
    steps = [DemoStep(text="What is 23 * 19 + 4? Save the result as a note.", expect="441")]
    async with loop_worker(demo_registry(notebook)) as w:
        report = await run_demo_session(
            w.sessions, w.store, notebook, unique("demo"), settings, lambda line: None, steps
        )
    assert report.passed, report.checks
    assert report.llm_ms[0] >= 2500
    assert len(scripted_llm.requests(model)) == 4, "no turn was retried"  # the gate, 3 turns


def slow_reply(step, request, *, seconds: float):
    return reply.slow(step(request), seconds)
