"""Every Update (and Signal) is traced where its caller is (issue 27): a later message's
``ValidateUpdate:send_message`` is in that message's trace, a budget change is in a trace of
its own, not in the trace of the message that started the session, and a failed message's
``durable_loop.message`` span is an ERROR span."""

from __future__ import annotations

from opentelemetry.trace import StatusCode

from durable_loop.client.connect import connect
from durable_loop.client.sessions import SessionClient
from durable_loop.client.settings import TemporalSettings
from durable_loop.core.budget import BudgetChange
from durable_loop.core.config import RuntimeConfig
from durable_loop.testing import reply
from durable_loop.worker.observability.setup import tracing
from tests.conftest import settings_for, unique
from tests.worker.observability.test_message_traces import address_of, global_spans, of_session
from tests.worker.observability.test_worker_observability import calculator
from tests.workflows.test_sub_agents import TASK, registry_with, researcher

__all__ = ["global_spans"]  # the fixture, used by name


async def test_updates_are_traced_in_their_callers_trace(
    loop_worker, scripted_llm, temporal_env, global_spans
):
    exporter, provider = global_spans
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model,
        [
            reply.tool_call("add", {"a": 2, "b": 3}, call_id="c-1"),
            reply.text("5", usage={"prompt_tokens": 40, "completion_tokens": 10}),
            reply.text("2"),
        ],
    )
    settings = settings_for(scripted_llm, model, runtime=RuntimeConfig(max_session_tokens=50))
    async with loop_worker(calculator(), interceptors=tracing(provider, None)) as w:
        client = await connect(TemporalSettings(address=address_of(temporal_env)))
        sessions = SessionClient(client, task_queue=w.task_queue)
        w.sessions.started_workflow_ids.add(f"session-{sid}")
        first = await sessions.start_and_send(sid, settings, "2+3?")
        over = await sessions.send(sid, "and 1+1?")
        raised = await sessions.set_budget(
            sid, BudgetChange(changed_by="alice", max_session_tokens=10_000)
        )
        again = await sessions.send(sid, "and 1+1?")
    assert first.status == "completed", first
    assert over.status == "failed" and over.error and over.error.code == "BUDGET_EXCEEDED"
    assert raised.changed_by == "alice"
    assert again.status == "completed", again

    spans = of_session(exporter.get_finished_spans(), sid)
    roots = {s.attributes["durable_loop.message_id"]: s for s in spans if s.name == "send_message"}
    trace_of = {m: roots[m].context.trace_id for m in (r.message_id for r in (first, over, again))}
    assert len(set(trace_of.values())) == 3

    def named(name: str) -> list:
        return [s for s in spans if s.name == name]

    # One validation per message, each in its message's trace (the first message's one
    # came with the session's start; the later ones came with their own Update).
    validated = named("ValidateUpdate:send_message")
    assert sorted(s.context.trace_id for s in validated) == sorted(trace_of.values())
    for message_id, trace_id in trace_of.items():
        handles = named("HandleUpdate:send_message")
        (handled,) = [s for s in handles if s.context.trace_id == trace_id]
        (checked,) = [s for s in validated if s.context.trace_id == trace_id]
        assert checked.parent is not None and checked.parent.span_id == handled.parent.span_id
        assert handled.parent.trace_id == trace_id, message_id

    # The budget change: its own trace, rooted at the client's Update call; the audit
    # activity it starts is in it too, and none of it is in a message's trace.
    (called,) = named("StartWorkflowUpdate:set_budget")
    budget_trace = called.context.trace_id
    assert budget_trace not in trace_of.values()
    for name in (
        "ValidateUpdate:set_budget",
        "HandleUpdate:set_budget",
        "StartActivity:audit_session_change",
        "RunActivity:audit_session_change",
    ):
        (span,) = named(name)
        assert span.context.trace_id == budget_trace, name
    (handled_budget,) = named("HandleUpdate:set_budget")
    assert handled_budget.parent.span_id == called.context.span_id
    (audit_started,) = named("StartActivity:audit_session_change")
    assert audit_started.parent.span_id == handled_budget.context.span_id

    # How each message ended, on the worker's side: a failed one is an ERROR span.
    ended = {s.attributes["durable_loop.message_id"]: s for s in named("durable_loop.message")}
    failed = ended[over.message_id]
    assert failed.attributes["durable_loop.status"] == "failed"
    assert failed.status.status_code is StatusCode.ERROR
    assert failed.status.description == "BUDGET_EXCEEDED"
    assert "durable_loop.otel_error" not in failed.attributes
    assert ended[first.message_id].status.status_code is StatusCode.UNSET
    assert ended[again.message_id].status.status_code is StatusCode.UNSET


async def test_a_refused_update_and_a_signal_are_in_traces_of_their_own(
    loop_worker, scripted_llm, temporal_env, global_spans
):
    exporter, provider = global_spans
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.text("hi")])
    async with loop_worker(calculator(), interceptors=tracing(provider, None)) as w:
        client = await connect(TemporalSettings(address=address_of(temporal_env)))
        sessions = SessionClient(client, task_queue=w.task_queue)
        w.sessions.started_workflow_ids.add(f"session-{sid}")
        first = await sessions.start_and_send(sid, settings_for(scripted_llm, model), "hi")
        try:
            await sessions.set_budget(sid, BudgetChange(changed_by="  ", max_turns=3))
        except Exception as err:  # the refusal, as the client sees it
            refusal = err
        await sessions.post_cancel(sid)  # a Signal (nothing runs: ignored)
        await sessions.status(sid)  # the Signal was handled before this Query's answer
    assert first.status == "completed"
    assert "INVALID_SETTING" in repr(refusal.__cause__ or refusal)

    spans = of_session(exporter.get_finished_spans(), sid)
    (root,) = [s for s in spans if s.name == "send_message"]
    (called,) = [s for s in spans if s.name == "StartWorkflowUpdate:set_budget"]
    (checked,) = [s for s in spans if s.name == "ValidateUpdate:set_budget"]
    assert checked.context.trace_id == called.context.trace_id != root.context.trace_id
    assert checked.status.status_code is StatusCode.ERROR
    assert checked.status.description == "INVALID_SETTING"
    assert not [s for s in spans if s.name == "HandleUpdate:set_budget"]
    assert not [s for s in spans if s.name.startswith("CompleteWorkflow:")]
    (signalled,) = [s for s in spans if s.name == "SignalWorkflow:cancel_message"]
    (handled,) = [s for s in spans if s.name == "HandleSignal:cancel_message"]
    assert handled.parent is not None and handled.parent.span_id == signalled.context.span_id
    assert handled.context.trace_id != root.context.trace_id


async def test_a_sub_agent_started_by_a_later_message_is_in_that_messages_trace(
    loop_worker, scripted_llm, temporal_env, global_spans
):
    exporter, provider = global_spans
    parent_model, child_model, sid = unique("p"), unique("c"), unique("s")
    scripted_llm.script(
        parent_model,
        [reply.text("hello"), reply.tool_call("researcher", TASK, "r1"), reply.text("Paris.")],
    )
    scripted_llm.script(child_model, [reply.text("Paris")])
    registry = registry_with(researcher(scripted_llm, child_model))
    async with loop_worker(registry, interceptors=tracing(provider, None)) as w:
        client = await connect(TemporalSettings(address=address_of(temporal_env)))
        sessions = SessionClient(client, task_queue=w.task_queue)
        w.sessions.started_workflow_ids.add(f"session-{sid}")
        first = await sessions.start_and_send(sid, settings_for(scripted_llm, parent_model), "hi")
        second = await sessions.send(sid, "What is the capital of France?")
    assert first.status == second.status == "completed"
    spans = of_session(exporter.get_finished_spans(), sid)
    roots = {s.attributes["durable_loop.message_id"]: s for s in spans if s.name == "send_message"}
    (started,) = [s for s in spans if s.name.startswith("StartChildWorkflow:")]
    assert started.context.trace_id == roots[second.message_id].context.trace_id
