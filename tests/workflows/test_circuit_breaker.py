"""The fallback chain's circuit breaker: a primary that is down costs one short attempt
budget once, then later turns skip it until its cool-down ends and a probe finds it back."""

from __future__ import annotations

import socket
import time

import pytest_asyncio

from durable_loop.core.circuit import CircuitBreakerSettings
from durable_loop.core.config import RuntimeConfig, SessionSettings
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.testing import reply
from durable_loop.testing.history import EventType, events_of
from durable_loop.testing.pytest_plugin import running_test_environment
from tests.conftest import settings_for, unique
from tests.workflows.test_fallback import endpoint, llm_summaries
from tests.workflows.toolkit import ToolLog, recording_tools


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def temporal_env():
    """A server of this module's own: skipping ten simulated minutes must not wait on
    another module's leftover workflow task (no worker polls it, so it locks time skipping)."""
    async with running_test_environment() as env:
        yield env


def cool_down_s(env) -> float:
    """Ten minutes on the time-skipping server; two seconds of real time on the dev server."""
    return 600.0 if env.supports_time_skipping else 2.0


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def down_primary_settings(scripted_llm, backup: str, **runtime) -> SessionSettings:
    """The primary points at a closed port and keeps the default retry policy (5
    attempts, ~15 s of backoff) that a refused connection must not spend."""
    primary = LlmEndpoint(model="down", base_url=f"http://127.0.0.1:{closed_port()}")
    return SessionSettings(
        llm=primary,
        fallback_llms=[endpoint(scripted_llm, backup)],
        runtime=RuntimeConfig(**runtime),
    )


def failure_types(history) -> list[str]:
    return [
        e.activity_task_failed_event_attributes.failure.application_failure_info.type
        for e in events_of(history, EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED)
    ]


def started_attempts(history) -> list[int]:
    """The attempt each activity finished on (its started event records the last one)."""
    return [
        e.activity_task_started_event_attributes.attempt
        for e in events_of(history, EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED)
    ]


async def test_a_refused_primary_falls_back_fast_and_is_skipped_while_open(
    loop_worker, scripted_llm
):
    backup, sid, log = unique("backup"), unique("s"), ToolLog()
    scripted_llm.script(
        backup, [reply.tool_call("add", {"a": 2, "b": 3}), reply.text("5"), reply.text("hi")]
    )
    settings = down_primary_settings(scripted_llm, backup)
    async with loop_worker(recording_tools(log)) as w:
        await w.sessions.start(sid, settings)
        started = time.monotonic()
        first = await w.sessions.send(sid, "2+3?")
        first_took = time.monotonic() - started
        second = await w.sessions.send(sid, "hello")
        (history,) = await w.histories(sid)
        trace = await w.sessions.trace(sid)

    assert first.status == "completed" and first.reply == "5" and log.names() == ["add"]
    assert first_took < 5.0
    refused, skipped = first.fallbacks
    assert (refused.turn, refused.failed_model, refused.skipped) == (1, "down", False)
    assert refused.error.code == "PROVIDER_UNREACHABLE"
    assert (skipped.turn, skipped.skipped, skipped.error.code) == (2, True, "CIRCUIT_OPEN")
    assert "circuit breaker is open" in skipped.error.message
    (again,) = second.fallbacks
    assert again.skipped and again.error.code == "CIRCUIT_OPEN" and second.reply == "hi"
    # one activity on the primary in the whole session: two attempts, then never again
    assert [s for s in llm_summaries(history) if s.startswith("llm: down")] == ["llm: down turn 1"]
    assert f"llm: {backup} turn 3 (fallback after down) (circuit open: down)" in llm_summaries(
        history
    )
    assert trace.message_results[1].fallbacks == second.fallbacks
    assert failure_types(history) == ["PROVIDER_UNREACHABLE"]
    assert started_attempts(history)[0] == 2  # unreachable_retry: 2 attempts, not 5


async def test_after_the_cool_down_one_probe_attempt_closes_the_circuit(
    loop_worker, scripted_llm, temporal_env
):
    primary, backup, sid = unique("primary"), unique("backup"), unique("s")
    scripted_llm.script(primary, [*[reply.error(503)] * 3, reply.text("back"), reply.text("again")])
    scripted_llm.script(backup, [reply.text("one"), reply.text("two")])
    breaker = CircuitBreakerSettings(cool_down_s=cool_down_s(temporal_env))
    runtime = RuntimeConfig(circuit_breaker=breaker)
    settings = settings_for(scripted_llm, primary, runtime=runtime).model_copy(
        update={"fallback_llms": [endpoint(scripted_llm, backup)]}
    )
    async with loop_worker() as w:
        await w.sessions.start(sid, settings)
        one = await w.sessions.send(sid, "a")  # 3 attempts (503): opens
        two = await w.sessions.send(sid, "b")  # skipped
        await temporal_env.sleep(cool_down_s(temporal_env) + 1)
        three = await w.sessions.send(sid, "c")  # probe: one attempt, answers
        four = await w.sessions.send(sid, "d")  # closed again
        (history,) = await w.histories(sid)

    assert [one.reply, two.reply, three.reply, four.reply] == ["one", "two", "back", "again"]
    assert [f.error.code for f in one.fallbacks] == ["HTTP_503"]
    assert [f.error.code for f in two.fallbacks] == ["CIRCUIT_OPEN"]
    assert three.fallbacks == four.fallbacks == [] and four.model == primary
    assert len(scripted_llm.requests(primary)) == 5
    primary_turns = [s for s in llm_summaries(history) if s.startswith(f"llm: {primary}")]
    assert primary_turns == [
        f"llm: {primary} turn 1",
        f"llm: {primary} turn 3",
        f"llm: {primary} turn 4",
    ]


async def test_a_failed_probe_opens_the_circuit_for_another_cool_down(
    loop_worker, scripted_llm, temporal_env
):
    primary, backup, sid = unique("primary"), unique("backup"), unique("s")
    scripted_llm.script(primary, [reply.error(503)] * 4)
    scripted_llm.script(backup, [reply.text("one"), reply.text("two"), reply.text("three")])
    breaker = CircuitBreakerSettings(cool_down_s=cool_down_s(temporal_env))
    runtime = RuntimeConfig(circuit_breaker=breaker)
    settings = settings_for(scripted_llm, primary, runtime=runtime).model_copy(
        update={"fallback_llms": [endpoint(scripted_llm, backup)]}
    )
    async with loop_worker() as w:
        await w.sessions.start(sid, settings)
        await w.sessions.send(sid, "a")
        await temporal_env.sleep(cool_down_s(temporal_env) + 1)
        probed = await w.sessions.send(sid, "b")  # one attempt, 503: open again
        skipped = await w.sessions.send(sid, "c")

    assert [f.error.code for f in probed.fallbacks] == ["HTTP_503"]
    assert [f.error.code for f in skipped.fallbacks] == ["CIRCUIT_OPEN"]
    assert len(scripted_llm.requests(primary)) == 4


async def test_with_the_breaker_off_every_turn_tries_the_primary(loop_worker, scripted_llm):
    primary, backup, sid = unique("primary"), unique("backup"), unique("s")
    scripted_llm.script(primary, [reply.error(503)] * 6)
    scripted_llm.script(backup, [reply.text("one"), reply.text("two")])
    runtime = RuntimeConfig(circuit_breaker=CircuitBreakerSettings(enabled=False))
    settings = settings_for(scripted_llm, primary, runtime=runtime).model_copy(
        update={"fallback_llms": [endpoint(scripted_llm, backup)]}
    )
    async with loop_worker() as w:
        await w.sessions.start(sid, settings)
        await w.sessions.send(sid, "a")
        two = await w.sessions.send(sid, "b")
    assert [f.error.code for f in two.fallbacks] == ["HTTP_503"]
    assert len(scripted_llm.requests(primary)) == 6


async def test_an_open_circuit_is_carried_across_continue_as_new(loop_worker, scripted_llm):
    backup, sid = unique("backup"), unique("s")

    def answer(request):  # type: ignore[no-untyped-def]
        if request.messages[-1]["role"] == "user":
            return reply.tool_call("add", {"a": len(request.messages), "b": 1})
        return reply.text("done")

    scripted_llm.script(backup, [], then=answer)
    settings = down_primary_settings(scripted_llm, backup, continue_as_new_after_events=200)
    async with loop_worker(recording_tools(ToolLog())) as w:
        await w.sessions.start(sid, settings)
        while (await w.sessions.status(sid)).run_index == 0:
            await w.sessions.send(sid, "go")
        after = await w.sessions.send(sid, "after continue-as-new")
        first_run, *later_runs = await w.histories(sid)

    assert {f.error.code for f in after.fallbacks} == {"CIRCUIT_OPEN"}
    assert [s for s in llm_summaries(first_run) if s.startswith("llm: down")] == [
        "llm: down turn 1"
    ]
    assert later_runs and not any(
        s.startswith("llm: down") for run in later_runs for s in llm_summaries(run)
    )
