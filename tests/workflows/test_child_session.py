"""Sessions as child workflows of the user's own workflows (``ChildSession``); the
example under examples/child_session covers the plugin path and continued conversations."""

from __future__ import annotations

import uuid

import pytest
from temporalio.client import WorkflowFailureError
from temporalio.exceptions import ApplicationError
from temporalio.worker import Worker

from durable_loop.client.history import fetch_histories
from durable_loop.core.config import RuntimeConfig, ToolUseMode
from durable_loop.core.contracts import ChildSessionResult
from durable_loop.testing import reply
from durable_loop.testing.history import replay_failures
from durable_loop.workflows.child_session import CHILD_DONE, ChildSessionWorkflow
from tests.conftest import settings_for, unique
from tests.workflows.child_parents import AskOnce, AskTwice
from tests.workflows.child_parents_plain import AskPlainly


async def run_parent(w, parent, session_id, settings) -> ChildSessionResult:
    queue = f"parents-{uuid.uuid4().hex[:12]}"
    async with Worker(w.sessions.client, task_queue=queue, workflows=[parent]):
        return await w.sessions.client.execute_workflow(
            parent.run,
            args=[session_id, settings, w.task_queue],
            id=unique("parent"),
            task_queue=queue,
        )


async def test_a_message_signalled_to_a_running_child_is_answered_too(loop_worker, scripted_llm):
    model = unique("m")
    # the first reply is slow, so the parent's signal lands while the child is busy
    scripted_llm.script(model, [reply.slow(reply.text("one"), 1.0), reply.text("two")])
    async with loop_worker() as w:
        sid = unique("s")
        result = await run_parent(w, AskTwice, sid, settings_for(scripted_llm, model))
        w.sessions.started_workflow_ids.add(f"session-{sid}")  # replayed on teardown
        status = await w.sessions.status(sid)
    assert [r.reply for r in result.results] == ["one", "two"]
    assert result.reply == "two"
    assert result.end.reason == CHILD_DONE
    assert result.end.messages_done == 2
    assert result.carried.messages_done == 2 and result.carried.next_seq == 4
    assert status.messages_done == 2  # the closed child still answers the session's Queries
    assert [m["content"] for m in scripted_llm.requests(model)[1].messages][-3:] == [
        "first?",
        "one",
        "second?",
    ]


async def test_an_unreliable_model_in_enforced_mode_fails_the_parent_cleanly(
    loop_worker, scripted_llm
):
    settings = settings_for(
        scripted_llm, unique("m"), runtime=RuntimeConfig(tool_use_mode=ToolUseMode.ENFORCED)
    )
    settings = settings.model_copy(
        update={"llm": settings.llm.model_copy(update={"tool_calling_reliable": False})}
    )
    async with loop_worker() as w:
        with pytest.raises(WorkflowFailureError) as failed:
            await run_parent(w, AskOnce, unique("s"), settings)
    cause = failed.value.cause
    assert isinstance(cause, ApplicationError)
    assert cause.type == "CONFIG_ERROR" and cause.non_retryable


async def test_child_histories_replay(loop_worker, scripted_llm, temporal_env):
    model = unique("m")
    scripted_llm.script(model, [reply.tool_call("add", {"a": 1, "b": 2}), reply.text("3")])
    async with loop_worker() as w:
        sid = unique("s")
        result = await run_parent(w, AskOnce, sid, settings_for(scripted_llm, model))
    assert result.reply == "3" and result.results[0].turns == 2
    runs = await fetch_histories(temporal_env.client, f"session-{sid}")
    assert len(runs) == 1
    assert runs[0].events[0].workflow_execution_started_event_attributes.workflow_type.name == (
        "ChildSession"
    )
    assert await replay_failures(runs, workflows=[ChildSessionWorkflow]) == {}


async def test_a_parent_importing_durable_loop_inside_the_sandbox(loop_worker, scripted_llm):
    model = unique("m")
    scripted_llm.script(model, [reply.text("plainly")])
    async with loop_worker() as w:
        result = await run_parent(w, AskPlainly, unique("s"), settings_for(scripted_llm, model))
    assert result.reply == "plainly"
