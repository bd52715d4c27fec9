"""The set_budget Update: a running session's budget is raised, validated and audited."""

from __future__ import annotations

import pytest
import pytest_asyncio
from temporalio.client import WorkflowUpdateFailedError

from durable_loop.client.refusals import refusal_of
from durable_loop.core.budget import BudgetChange
from durable_loop.core.config import RuntimeConfig
from durable_loop.store import StoreConfig
from durable_loop.store.workspace import open_workspace_store
from durable_loop.testing import reply
from durable_loop.testing.history import EventType, events_of
from tests.conftest import settings_for, unique
from tests.workflows.toolkit import ToolLog, recording_tools


@pytest_asyncio.fixture
async def ws(store_url):
    store = open_workspace_store(StoreConfig(url=store_url))
    yield store
    await store.close()


async def test_raising_the_budget_lets_the_session_go_on_and_is_audited(
    loop_worker, scripted_llm, ws
):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.text("one"), reply.text("two")])  # 15 tokens each
    runtime = RuntimeConfig(max_session_tokens=10)
    async with loop_worker() as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=runtime))
        first = await w.sessions.send(sid, "a")
        refused = await w.sessions.send(sid, "b")
        change = BudgetChange(
            changed_by="ops@example.com", max_session_tokens=100, max_turns=4, comment="demo day"
        )
        changed = await w.sessions.set_budget(sid, change)
        status = await w.sessions.status(sid)
        after = await w.sessions.send(sid, "c")
    audit = [a for a in await ws.audit(sid) if a.target == "budget"]

    assert first.reply == "one" and refused.error.code == "BUDGET_EXCEEDED"
    assert "set_budget" in refused.error.message
    assert "durable-loop budget SESSION --max-session-tokens N" in refused.error.message
    assert (changed.previous.max_session_tokens, changed.budget.max_session_tokens) == (10, 100)
    assert (changed.previous.max_turns, changed.budget.max_turns) == (12, 4)
    assert changed.used_tokens == 15 and changed.changed_by == "ops@example.com"
    assert status.budget is not None and status.budget.max_session_tokens == 100
    assert after.status == "completed" and after.reply == "two"
    assert [(a.op, a.path, a.value) for a in audit] == [
        ("set", "/max_session_tokens", 100),
        ("set", "/max_turns", 4),
    ]
    assert {(a.actor, a.actor_kind, a.session_id, a.comment) for a in audit} == {
        ("ops@example.com", "human", sid, "demo day")
    }


async def test_the_budget_change_survives_continue_as_new_and_can_lift_the_limit(
    loop_worker, scripted_llm
):
    model, sid = unique("m"), unique("s")

    def answer(request):  # type: ignore[no-untyped-def]
        if request.messages[-1]["role"] == "user":
            return reply.tool_call("add", {"a": len(request.messages), "b": 1})
        return reply.text(f"after {len(request.messages)} messages")

    scripted_llm.script(model, [], then=answer)
    runtime = RuntimeConfig(max_session_tokens=10, continue_as_new_after_events=200)
    async with loop_worker(recording_tools(ToolLog())) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=runtime))
        lifted = await w.sessions.set_budget(
            sid, BudgetChange(changed_by="ops", unlimited_tokens=True)
        )
        results = [await w.sessions.send(sid, f"m{i}") for i in range(12)]
        status = await w.sessions.status(sid)
        histories = await w.histories(sid)

    assert lifted.budget.max_session_tokens is None
    assert len(histories) > 1 and status.run_index >= 1
    assert all(r.status == "completed" for r in results)
    assert status.budget is not None and status.budget.max_session_tokens is None


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"changed_by": " "}, "changed_by"),
        ({"changed_by": "ops"}, "nothing to change"),
        ({"changed_by": "ops", "max_session_tokens": 5, "unlimited_tokens": True}, "not both"),
        ({"changed_by": "o\x00ps", "max_turns": 3}, "NUL"),
    ],
)
async def test_a_change_that_does_not_validate_is_refused_before_history(
    loop_worker, scripted_llm, kwargs, says
):
    sid = unique("s")
    async with loop_worker() as w:
        await w.sessions.start(sid, settings_for(scripted_llm, unique("m")))
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await w.sessions.set_budget(sid, BudgetChange(**kwargs))
        (history,) = await w.histories(sid)
    refusal = refusal_of(refused.value)
    assert refusal.code == "INVALID_SETTING" and says in refusal.message
    assert events_of(history, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED) == []
