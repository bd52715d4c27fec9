"""Sub-agents: a tool call that runs another agent as a child workflow of the session."""

from __future__ import annotations

import asyncio
import json

import pytest
from rich.console import Console
from temporalio.client import WorkflowUpdateFailedError
from temporalio.service import RPCError

from durable_loop.client.history import fetch_histories
from durable_loop.client.trace.fetch import load_trace
from durable_loop.client.trace.render import print_trace
from durable_loop.core.approvals import (
    QUERY_TOOL_APPROVALS,
    SIGNAL_TOOL_CALL_DECISION,
    UPDATE_DECIDE_TOOL_CALL,
    ToolApprovalList,
    ToolCallDecided,
)
from durable_loop.core.config import RuntimeConfig
from durable_loop.core.contracts import ChildSessionResult
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.errors import ConfigError, ErrorCode
from durable_loop.core.registry import ToolRegistry
from durable_loop.core.sub_agent_config import SubAgentConfig
from durable_loop.core.sub_agents import child_session_id
from durable_loop.testing import reply
from durable_loop.testing.history import EventType, events_of, replay_failures
from tests.conftest import FAST_RETRY, settings_for, unique
from tests.workflows.approval_kit import Payments
from tests.workflows.test_run_control import SLOW_S
from tests.workflows.test_session import wait_until

TASK = {"task": "find the capital of France"}


def endpoint(scripted_llm, model: str) -> LlmEndpoint:
    return LlmEndpoint(
        model=model, base_url=scripted_llm.base_url, timeout_s=10.0, retry=FAST_RETRY
    )


def registry_with(*configs: SubAgentConfig, tools: ToolRegistry | None = None) -> ToolRegistry:
    registry = tools or ToolRegistry()
    for config in configs:
        registry.add_sub_agent(config)
    return registry


def researcher(scripted_llm, model: str, **fields) -> SubAgentConfig:
    return SubAgentConfig(
        name="researcher",
        description="Looks things up",
        llm=endpoint(scripted_llm, model),
        system_prompt="You research.",
        **fields,
    )


def tool_results(store_rows) -> dict[str, dict]:
    return {
        m.tool_call_id: json.loads(m.envelope.to_content()) for m in store_rows if m.role == "tool"
    }


async def transcript(w, session_id: str):
    return [row.message for row in await w.store.read(session_id)]


async def replay_everything(w, temporal_env, *session_ids: str) -> None:
    histories = []
    for sid in session_ids:
        histories += await fetch_histories(temporal_env.client, f"session-{sid}")
    assert histories
    assert await replay_failures(histories) == {}


async def test_the_child_reply_is_the_tool_result_and_usage_adds_up(
    loop_worker, scripted_llm, temporal_env, store_url
):
    parent_model, child_model = unique("p"), unique("c")
    scripted_llm.script(
        parent_model, [reply.tool_call("researcher", TASK, "r1"), reply.text("It is Paris.")]
    )
    scripted_llm.script(child_model, [reply.text("Paris")])
    async with loop_worker(registry_with(researcher(scripted_llm, child_model))) as w:
        sid = unique("s")
        await w.sessions.start(sid, settings_for(scripted_llm, parent_model))
        result = await w.sessions.send(sid, "What is the capital of France?")
        child = child_session_id(sid, "r1", 2)
        child_status = await w.sessions.status(child)
        parent_rows = await transcript(w, sid)
        child_rows = await transcript(w, child)
        trace = await load_trace(w.sessions.client, sid, db_url=store_url)
        child_trace = await load_trace(w.sessions.client, child, db_url=store_url)
    assert result.status == "completed", result
    assert result.reply == "It is Paris."
    envelope = tool_results(parent_rows)["r1"]
    assert envelope == {"ok": True, "data": "Paris", "errors": [], "warnings": []}
    # two parent turns and one child turn, 15 tokens each (the scripted default)
    assert result.usage.total_tokens == 45
    assert child_status.usage.total_tokens == 15
    assert [m.role for m in child_rows] == ["user", "assistant"]
    assert child_rows[0].content == TASK["task"]
    child_request = scripted_llm.requests(child_model)[0]
    assert child_request.messages[0] == {"role": "system", "content": "You research."}
    assert child_request.tool_names == []
    assert scripted_llm.requests(parent_model)[0].tool_names == ["researcher"]
    # the child's events stay in its own history: the parent's has its start and completion
    [parent_history] = await fetch_histories(temporal_env.client, f"session-{sid}")
    assert len(events_of(parent_history, EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)) == 2
    started = events_of(parent_history, EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED)
    completed = events_of(parent_history, EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED)
    assert len(started) == len(completed) == 1
    # the trace links the call to the child's session, which has a trace of its own
    [call] = [c for t in trace.turns for c in t.calls]
    assert call.sub_agent_session == child
    console = Console(record=True, width=200)
    print_trace(trace, console)
    assert f"sub-agent session {child}" in console.export_text()
    assert [t.model for t in child_trace.turns] == [child_model]
    await replay_everything(w, temporal_env, sid, child)


async def test_a_failing_child_gives_a_coded_envelope_and_the_parent_goes_on(
    loop_worker, scripted_llm
):
    parent_model, child_model = unique("p"), unique("c")
    scripted_llm.script(
        parent_model,
        [reply.tool_call("researcher", TASK, "r1"), reply.text("The researcher failed.")],
    )
    scripted_llm.script(
        child_model, [reply.tool_call("nothing_here", {}, "x")], then=reply.text("")
    )
    config = researcher(scripted_llm, child_model, max_turns=1)
    async with loop_worker(registry_with(config)) as w:
        sid = unique("s")
        await w.sessions.start(sid, settings_for(scripted_llm, parent_model))
        result = await w.sessions.send(sid, "capital?")
        rows = await transcript(w, sid)
    assert result.status == "completed" and result.reply == "The researcher failed."
    envelope = tool_results(rows)["r1"]
    assert envelope["ok"] is False
    [error] = envelope["errors"]
    assert error["code"] == ErrorCode.SUB_AGENT_FAILED
    assert envelope["data"] == {
        "session_id": child_session_id(sid, "r1", 2),
        "code": ErrorCode.MAX_TURNS,
    }
    assert [(c.name, c.ok, c.error_codes) for c in result.tool_calls] == [
        ("researcher", False, [ErrorCode.SUB_AGENT_FAILED])
    ]
    assert result.usage.total_tokens == 45  # the failed child's turn is counted too


async def test_depth_over_the_limit_is_a_coded_tool_error(loop_worker, scripted_llm):
    parent_model = unique("p")
    scripted_llm.script(
        parent_model, [reply.tool_call("researcher", TASK, "r1"), reply.text("no luck")]
    )
    runtime = RuntimeConfig(max_sub_agent_depth=0)
    async with loop_worker(registry_with(researcher(scripted_llm, unique("c")))) as w:
        sid = unique("s")
        await w.sessions.start(sid, settings_for(scripted_llm, parent_model, runtime=runtime))
        result = await w.sessions.send(sid, "capital?")
        rows = await transcript(w, sid)
    assert result.status == "completed"
    envelope = tool_results(rows)["r1"]
    assert [e["code"] for e in envelope["errors"]] == [ErrorCode.SUB_AGENT_TOO_DEEP]
    assert "max_sub_agent_depth is 0" in envelope["errors"][0]["message"]


async def child_running(w, child: str) -> None:
    async def running() -> bool:
        try:
            return (await w.sessions.status(child)).state == "running"
        except RPCError:  # not started yet
            return False

    await wait_until(running)


async def test_cancelling_the_parent_message_cancels_the_child(
    loop_worker, scripted_llm, temporal_env
):
    parent_model, child_model = unique("p"), unique("c")
    scripted_llm.script(parent_model, [reply.tool_call("researcher", TASK, "r1")])
    scripted_llm.script(child_model, [reply.slow(reply.text("too late"), SLOW_S)])
    async with loop_worker(registry_with(researcher(scripted_llm, child_model))) as w:
        sid = unique("s")
        child = child_session_id(sid, "r1", 2)
        await w.sessions.start(sid, settings_for(scripted_llm, parent_model))
        sent = asyncio.create_task(w.sessions.send(sid, "capital?", message_id="m1"))
        await child_running(w, child)
        cancelled = await w.sessions.cancel(sid, reason="changed my mind")
        result = await sent
        child_handle = w.sessions.client.get_workflow_handle(
            f"session-{child}", result_type=ChildSessionResult
        )
        child_result = await child_handle.result()
        rows = await transcript(w, sid)
    assert result == cancelled and result.status == "cancelled"
    assert [(c.name, c.error_codes) for c in result.tool_calls] == [
        ("researcher", [ErrorCode.TOOL_CALL_CANCELLED])
    ]
    assert [e["code"] for e in tool_results(rows)["r1"]["errors"]] == [
        ErrorCode.TOOL_CALL_CANCELLED
    ]
    [child_run] = child_result.results
    assert child_run.status == "cancelled"
    assert child_run.error is not None and "changed my mind" in child_run.error.message
    await replay_everything(w, temporal_env, sid, child)


async def test_the_budget_holds_across_parent_and_child(loop_worker, scripted_llm):
    parent_model, child_model = unique("p"), unique("c")
    scripted_llm.script(
        parent_model, [reply.tool_call("researcher", TASK, "r1")], then=reply.text("unreached")
    )
    scripted_llm.script(
        child_model,
        [
            reply.tool_call("lookup", {"query": "a"}, "l1"),
            reply.tool_call("lookup", {"query": "b"}),
        ],
    )
    lookups: list[str] = []
    tools = ToolRegistry()

    @tools.tool()
    def lookup(query: str) -> str:
        """Look something up."""
        lookups.append(query)
        return f"found {query}"

    config = researcher(scripted_llm, child_model, tools=["lookup"], max_session_tokens=1000)
    runtime = RuntimeConfig(max_session_tokens=40)
    async with loop_worker(registry_with(config, tools=tools)) as w:
        sid = unique("s")
        await w.sessions.start(sid, settings_for(scripted_llm, parent_model, runtime=runtime))
        result = await w.sessions.send(sid, "capital?")
        child_status = await w.sessions.status(child_session_id(sid, "r1", 2))
        rows = await transcript(w, sid)
    # the child may spend only the 25 tokens the parent had left: its second turn crosses
    assert child_status.budget.max_session_tokens == 25
    assert child_status.last_result is not None
    assert child_status.last_result.error.code == ErrorCode.BUDGET_EXCEEDED
    assert lookups == ["a"]
    envelope = tool_results(rows)["r1"]
    assert envelope["data"]["code"] == ErrorCode.BUDGET_EXCEEDED
    assert result.status == "failed" and result.error.code == ErrorCode.BUDGET_EXCEEDED
    assert result.usage.total_tokens == 45  # 15 of the parent's, 30 of the child's
    assert scripted_llm.remaining(parent_model) == 0  # no second parent turn was asked for


async def test_a_call_held_inside_the_child_is_decided_through_the_parent(
    loop_worker, scripted_llm, temporal_env
):
    parent_model, child_model = unique("p"), unique("c")
    payments = Payments()
    config = researcher(scripted_llm, child_model, tools=["pay"])
    async with loop_worker(registry_with(config, tools=payments.registry())) as w:
        sid = unique("s")
        child = child_session_id(sid, "r1", 2)
        sent, parent, held = await held_in_child(w, scripted_llm, parent_model, child_model, sid)
        assert (held.session_id, held.call_id, held.tool) == (child, "c1", "pay")
        assert payments.made == []
        with pytest.raises(WorkflowUpdateFailedError):  # checked by the parent, nothing sent
            await parent.execute_update(
                UPDATE_DECIDE_TOOL_CALL,
                held.decision("confirm", "alice").model_copy(update={"fingerprint": "bad"}),
                result_type=ToolCallDecided,
            )
        decided = await parent.execute_update(
            UPDATE_DECIDE_TOOL_CALL, held.decision("confirm", "alice"), result_type=ToolCallDecided
        )
        result = await w.sessions.message_result(sid, sent.message_id)
        after = await parent.query(QUERY_TOOL_APPROVALS, result_type=ToolApprovalList)
    assert decided.status == "confirmed" and decided.decided_by == "alice"
    assert [(amount, to) for amount, to, _ in payments.made] == [(5, "acme")]
    assert result.status == "completed" and result.reply == "all paid"
    assert after.pending == [] and after.decided == [decided]  # listed after the child ended
    await replay_everything(w, temporal_env, sid, child)


async def test_a_worker_with_a_sub_agent_cycle_is_not_built(loop_worker):
    registry = ToolRegistry()
    registry.add_sub_agent(SubAgentConfig(name="planner", tools=["critic"]))
    registry.add_sub_agent(SubAgentConfig(name="critic", tools=["planner"]))
    with pytest.raises(ConfigError) as refused:
        async with loop_worker(registry):
            pass
    assert refused.value.code == ErrorCode.INVALID_SETTING
    assert "planner -> critic -> planner" in str(refused.value)


async def held_in_child(w, scripted_llm, parent_model, child_model, sid):
    """Send a parent message whose sub-agent holds a ``pay`` call: its first answer, the
    parent's handle and the held call."""
    scripted_llm.script(
        parent_model, [reply.tool_call("researcher", TASK, "r1"), reply.text("all paid")]
    )
    scripted_llm.script(
        child_model, [reply.tool_call("pay", {"amount": 5, "to": "acme"}, "c1"), reply.text("paid")]
    )
    await w.sessions.start(sid, settings_for(scripted_llm, parent_model))
    # the parent's send answers awaiting_approval with the call its sub-agent holds
    first = await w.sessions.send(sid, "pay acme", message_id="m1")
    parent = w.sessions.handle(sid)
    [held] = (await parent.query(QUERY_TOOL_APPROVALS, result_type=ToolApprovalList)).pending
    assert first.status == "awaiting_approval" and first.pending_approvals == [held]
    assert (await w.sessions.status(sid)).state == "awaiting_approval"
    return first, parent, held


async def test_cancelling_the_parent_while_the_child_waits_for_approval(
    loop_worker, scripted_llm, temporal_env
):
    parent_model, child_model = unique("p"), unique("c")
    payments = Payments()
    config = researcher(scripted_llm, child_model, tools=["pay"])
    async with loop_worker(registry_with(config, tools=payments.registry())) as w:
        sid = unique("s")
        child = child_session_id(sid, "r1", 2)
        sent, parent, held = await held_in_child(w, scripted_llm, parent_model, child_model, sid)
        cancelled = await w.sessions.cancel(sid, reason="stop")
        result = await w.sessions.message_result(sid, sent.message_id)
        after = await parent.query(QUERY_TOOL_APPROVALS, result_type=ToolApprovalList)
        child_status = await w.sessions.status(child)
    assert held.session_id == child
    assert result == cancelled and result.status == "cancelled"
    assert [c.error_codes for c in result.tool_calls] == [[ErrorCode.TOOL_CALL_CANCELLED]]
    assert payments.made == [] and after.pending == []
    assert child_status.last_result is not None
    assert child_status.last_result.status == "cancelled"
    assert scripted_llm.remaining(child_model) == 1  # the child asked for no further turn
    await replay_everything(w, temporal_env, sid, child)


async def test_a_nested_sub_agent_over_the_depth_limit_is_refused_inside_the_child(
    loop_worker, scripted_llm, temporal_env
):
    parent_model, middle_model, leaf_model = unique("p"), unique("m"), unique("l")
    scripted_llm.script(
        parent_model, [reply.tool_call("middle", TASK, "t1"), reply.text("top done")]
    )
    scripted_llm.script(
        middle_model, [reply.tool_call("leaf", TASK, "t2"), reply.text("middle done")]
    )
    leaf = SubAgentConfig(name="leaf", llm=endpoint(scripted_llm, leaf_model))
    middle = SubAgentConfig(name="middle", llm=endpoint(scripted_llm, middle_model), tools=["leaf"])
    runtime = RuntimeConfig(max_sub_agent_depth=1)
    async with loop_worker(registry_with(leaf, middle)) as w:
        sid = unique("s")
        await w.sessions.start(sid, settings_for(scripted_llm, parent_model, runtime=runtime))
        result = await w.sessions.send(sid, "go")
        child = child_session_id(sid, "t1", 2)
        child_rows = await transcript(w, child)
    assert result.status == "completed" and result.reply == "top done"
    envelope = tool_results(child_rows)["t2"]
    assert [e["code"] for e in envelope["errors"]] == [ErrorCode.SUB_AGENT_TOO_DEEP]
    assert "depth 2" in envelope["errors"][0]["message"]
    assert scripted_llm.requests(leaf_model) == []
    assert result.usage.total_tokens == 60  # two turns each of parent and middle
    await replay_everything(w, temporal_env, sid, child)


async def test_a_rejection_signalled_to_the_parent_reaches_the_child(
    loop_worker, scripted_llm, temporal_env
):
    parent_model, child_model = unique("p"), unique("c")
    payments = Payments()
    config = researcher(scripted_llm, child_model, tools=["pay"])
    async with loop_worker(registry_with(config, tools=payments.registry())) as w:
        sid = unique("s")
        child = child_session_id(sid, "r1", 2)
        sent, parent, held = await held_in_child(w, scripted_llm, parent_model, child_model, sid)
        await parent.signal(SIGNAL_TOOL_CALL_DECISION, held.decision("reject", "bob"))
        result = await w.sessions.message_result(sid, sent.message_id)
        child_rows = await transcript(w, child)
    assert result.status == "completed" and result.reply == "all paid"
    assert payments.made == []
    assert [e["code"] for e in tool_results(child_rows)["c1"]["errors"]] == [
        ErrorCode.TOOL_CALL_REJECTED
    ]
    await replay_everything(w, temporal_env, sid, child)


async def test_a_typed_sub_agent_returns_its_validated_output(
    loop_worker, scripted_llm, temporal_env
):
    """The configuration's output_schema types the child's one message: its first answer
    is sent back with the errors, the valid one is the parent's tool result as data."""
    parent_model, child_model = unique("p"), unique("c")
    schema = {
        "type": "object",
        "properties": {"capital": {"type": "string"}, "population_m": {"type": "number"}},
        "required": ["capital", "population_m"],
    }
    scripted_llm.script(
        parent_model, [reply.tool_call("researcher", TASK, "r1"), reply.text("Paris, 2.1M.")]
    )
    scripted_llm.script(
        child_model,
        [
            reply.text('{"capital": "Paris"}'),
            reply.text('{"capital": "Paris", "population_m": 2.1}'),
        ],
    )
    config = researcher(scripted_llm, child_model, output_schema=schema)
    async with loop_worker(registry_with(config)) as w:
        sid = unique("s")
        await w.sessions.start(sid, settings_for(scripted_llm, parent_model))
        result = await w.sessions.send(sid, "What is the capital of France?")
        parent_rows = await transcript(w, sid)
        await replay_everything(w, temporal_env, sid, child_session_id(sid, "r1", 2))
    assert result.status == "completed", result
    assert tool_results(parent_rows)["r1"]["data"] == {"capital": "Paris", "population_m": 2.1}
    correction = scripted_llm.requests(child_model)[1].messages[-1]
    assert "population_m" in json.dumps(correction)
