"""The decision-audit activity settles a call in doubt: the row of a person's answer settles
the attempt marker of the run it answers (first settlement wins), on SQLite and PostgreSQL
(``DURABLE_LOOP_TEST_DB_URL``), in the row's transaction or, with the attempts in another
database, before it."""

from __future__ import annotations

import pytest
import pytest_asyncio

from durable_loop.activities.once_calls import marker_key
from durable_loop.activities.tools import idempotency_key
from durable_loop.activities.workspace import WorkspaceActivities, doubted_marker
from durable_loop.core.proposals import DecisionAudit
from durable_loop.store import StoreConfig, open_store
from durable_loop.store.tool_attempts import NO_BODY, ToolAttempts
from durable_loop.store.workspace import WorkspaceStore
from tests.conftest import unique

RESULT_SEQ = 2


@pytest_asyncio.fixture
async def opened(store_url):
    store = open_store(StoreConfig(url=store_url))
    yield store
    await store.close()


@pytest.fixture
def workspace(opened) -> WorkspaceActivities:
    return WorkspaceActivities(WorkspaceStore(opened.db))


def answer(workflow_id: str, *, reruns: int = 0, op: str = "reject") -> DecisionAudit:
    """The row the workflow writes for a person's answer to call c1 in doubt."""
    status = {"reject": "given_up", "confirm": "happened"}[op]
    return DecisionAudit(
        workspace_id=workflow_id,
        session_id="s1",
        target="tool",
        op=op,
        path="send_mail",
        actor="alice",
        turn=1,
        call_id="c1",
        value={"fingerprint": "f" * 64, "in_doubt": "...", "answer": status, "reruns": reruns},
        key=f"tool-decision:{workflow_id}:c1:{RESULT_SEQ}:in-doubt:{reruns}",
    )


def marker(workflow_id: str, reruns: int = 0) -> str:
    return marker_key(idempotency_key(workflow_id, "c1", RESULT_SEQ), reruns)


async def rows(workspace: WorkspaceActivities, workflow_id: str) -> list:
    return await workspace.store.audit(workflow_id)


def test_the_marker_is_the_one_the_tool_activity_marks():
    wid = "session-a:b"  # a colon in the workflow id, and in the call id below
    audit = answer(wid, reruns=2).model_copy(
        update={"call_id": "x:1", "key": f"tool-decision:{wid}:x:1:7:in-doubt:2"}
    )
    assert doubted_marker(audit) == marker_key(idempotency_key(wid, "x:1", 7), 2)
    approval = answer(wid).model_copy(update={"key": f"tool-decision:{wid}:c1:{RESULT_SEQ}"})
    refused = answer(wid).model_copy(update={"key": f"tool-refused:{wid}:c1:u1"})
    other_call = answer(wid).model_copy(update={"call_id": "c2"})
    assert [doubted_marker(a) for a in (approval, refused, other_call)] == [None, None, None]


async def test_an_answer_settles_the_call_and_a_late_body_loses(workspace):
    wid = unique("wf")
    attempts = workspace.attempts
    assert (await workspace.record_decision(answer(wid))).written is True
    assert await attempts.settled_by(marker(wid)) == NO_BODY
    assert await attempts.settle(marker(wid), session_id="s1", call_id="c1", by=1) is False
    [row] = await rows(workspace, wid)
    assert (row.op, row.actor) == ("reject", "alice")
    assert row.value["settled_by"] == "no body (in doubt)"
    assert row.value["answer"] == "given_up"  # the workflow's value is kept


async def test_an_answer_after_the_body_settled_is_recorded_and_says_the_body_won(workspace):
    wid = unique("wf")
    attempts = workspace.attempts
    await attempts.settle(marker(wid), session_id="s1", call_id="c1", by=1)
    assert (await workspace.record_decision(answer(wid, op="confirm"))).written is True
    assert await attempts.settled_by(marker(wid)) == 1
    [row] = await rows(workspace, wid)
    assert (row.op, row.value["answer"]) == ("confirm", "happened")
    assert row.value["settled_by"] == "the body of attempt 1"


async def test_an_answer_settles_the_run_it_answers(workspace):
    """After "run it again", the rerun is marked under a key of its own: the answer to its
    doubt settles that key, not the first run's."""
    wid = unique("wf")
    await workspace.record_decision(answer(wid, reruns=1))
    assert await workspace.attempts.settled_by(marker(wid, 1)) == NO_BODY
    assert await workspace.attempts.settled_by(marker(wid, 0)) is None


async def test_a_retried_audit_writes_one_row_and_an_approval_settles_nothing(workspace):
    wid = unique("wf")
    first = await workspace.record_decision(answer(wid))
    again = await workspace.record_decision(answer(wid))
    approval = answer(wid).model_copy(
        update={"op": "confirm", "value": {}, "key": f"tool-decision:{wid}:c2:3", "call_id": "c2"}
    )
    await workspace.record_decision(approval)
    assert (first.written, again.written) == (True, False)
    assert [r.value.get("settled_by") for r in await rows(workspace, wid)] == [
        "no body (in doubt)",
        None,
    ]
    assert await workspace.attempts.settled_by(idempotency_key(wid, "c2", 3)) is None


async def test_attempts_in_another_database_are_settled_there(opened, tmp_path):
    """A workspace with a database of its own: the attempts are the transcript store's."""
    own = open_store(StoreConfig.sqlite_file(tmp_path / "workspace.db"))
    try:
        attempts = ToolAttempts(opened.db, opened.engine.dialect.name)
        workspace = WorkspaceActivities(WorkspaceStore(own.db), attempts)
        wid = unique("wf")
        await workspace.record_decision(answer(wid))
        assert await attempts.settled_by(marker(wid)) == NO_BODY
        [row] = await rows(workspace, wid)
        assert row.value["settled_by"] == "no body (in doubt)"
    finally:
        await own.close()
