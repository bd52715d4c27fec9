"""Forking a session at a turn: a new session from the original's rows, nothing re-run."""

from __future__ import annotations

import pytest
import pytest_asyncio

from durable_loop.client.session_data import SessionData
from durable_loop.client.session_data.client import MEMO_FORKED_FROM
from durable_loop.core.errors import DurableLoopError, ErrorCode
from durable_loop.store.session_copy import transcript_rows
from durable_loop.testing import reply
from durable_loop.testing.pytest_plugin import running_test_environment
from durable_loop.tools.workspace import workspace_tools
from tests.client.kit import session_with_proposal, workspace_store
from tests.conftest import settings_for, unique


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def temporal_env():
    async with running_test_environment() as env:
        yield env


@pytest_asyncio.fixture
async def ws(store_url):
    store = workspace_store(store_url)
    yield store
    await store.close()


def texts(request) -> list[tuple[str, str]]:
    return [(m["role"], m.get("content") or "") for m in request.body["messages"]]


async def two_messages(w, scripted_llm) -> tuple[str, str]:
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.text("one"), reply.text("two"), reply.text("forked answer")])
    await w.sessions.start(sid, settings_for(scripted_llm, model, system_prompt="be brief"))
    assert (await w.sessions.send(sid, "first")).reply == "one"
    assert (await w.sessions.send(sid, "second")).reply == "two"
    return model, sid


async def test_fork_continues_from_the_turn_without_rerunning_it(loop_worker, scripted_llm):
    async with loop_worker() as w:
        model, sid = await two_messages(w, scripted_llm)
        before = await transcript_rows(w.store.db, sid)
        data = SessionData(w.sessions, w.store.db)
        fork_id = unique("fork")

        forked = await data.fork(sid, 1, fork_id)

        assert (forked.forked_from, forked.rows_copied) == (f"{sid}@1", 2)
        status = await w.sessions.status(fork_id)
        assert (status.messages_done, status.turns_total, status.next_seq) == (1, 1, 2)
        assert len(scripted_llm.requests(model)) == 2  # nothing ran again
        answer = await w.sessions.send(fork_id, "instead")
        described = await w.sessions.handle(fork_id).describe()
        memo = await described.memo_value(MEMO_FORKED_FROM)
        fork_rows = await transcript_rows(w.store.db, fork_id)
        after = await transcript_rows(w.store.db, sid)
    assert answer.reply == "forked answer"
    assert texts(scripted_llm.requests(model)[-1])[1:] == [
        ("user", "first"),
        ("assistant", "one"),
        ("user", "instead"),
    ]
    assert memo == f"{sid}@1"
    assert [r.model_dump() for r in fork_rows[:2]] == [r.model_dump() for r in before[:2]]
    assert [r.seq for r in fork_rows] == [0, 1, 2, 3]
    assert after == before  # the original is untouched


async def test_fork_with_another_model(loop_worker, scripted_llm):
    other = unique("other")
    scripted_llm.script(other, [reply.text("from the other model")])
    async with loop_worker() as w:
        _, sid = await two_messages(w, scripted_llm)
        fork_id = unique("fork")
        await SessionData(w.sessions, w.store.db).fork(sid, 2, fork_id, model=other)
        answer = await w.sessions.send(fork_id, "third")
        status = await w.sessions.status(fork_id)
    assert answer.reply == "from the other model"
    assert (status.model, status.messages_done, status.turns_total) == (other, 3, 3)
    sent = texts(scripted_llm.requests(other)[0])
    assert sent[0] == ("system", "be brief")
    assert [t for _, t in sent[1:]] == ["first", "one", "second", "two", "third"]


async def test_fork_refuses_bad_input_with_codes(loop_worker, scripted_llm):
    async with loop_worker() as w:
        _, sid = await two_messages(w, scripted_llm)
        data = SessionData(w.sessions, w.store.db)
        cases = [
            ((unique("nobody"), 1, unique("fork")), ErrorCode.SESSION_NOT_FOUND),
            ((sid, 3, unique("fork")), ErrorCode.TURN_OUT_OF_RANGE),
            ((sid, 0, unique("fork")), ErrorCode.TURN_OUT_OF_RANGE),
            ((sid, 1, sid), ErrorCode.SESSION_EXISTS),
            ((sid, 1, "has space"), ErrorCode.INVALID_SESSION_ID),
        ]
        for args, code in cases:
            with pytest.raises(DurableLoopError) as refused:
                await data.fork(*args)
            assert refused.value.code == code, args
        with pytest.raises(DurableLoopError) as out_of_range:
            await data.fork(sid, 7, unique("fork"))
        rows = await transcript_rows(w.store.db, sid)
    assert "turns 1 to 2" in out_of_range.value.message
    assert len(rows) == 4


async def test_decided_proposals_carry_pending_ones_do_not(
    loop_worker, scripted_llm, temporal_env, ws
):
    async with loop_worker(workspace_tools(ws)) as w:
        model, sid, pending = await session_with_proposal(w, ws, scripted_llm, temporal_env)
        data = SessionData(w.sessions, w.store.db)
        undecided = unique("fork")
        await data.fork(sid, 2, undecided)
        assert await w.sessions.pending_proposals(undecided) == []
        assert (await ws.snapshot(undecided)).facts["title"] == "Old title"

        await w.sessions.confirm(sid, pending.proposal_id, "alice")
        scripted_llm.script(model, [reply.text("noted")])
        await w.sessions.send(sid, "thanks")
        with pytest.raises(DurableLoopError) as stale:
            await data.fork(sid, 2, unique("fork"))
        decided = unique("fork")
        await data.fork(sid, 3, decided)
        facts = (await ws.snapshot(decided)).facts
        audit = await ws.audit(decided)
    assert stale.value.code == ErrorCode.STALE_VERSION
    assert facts["title"] == "New title"
    assert any(
        e.actor == "alice" and e.proposal_id == pending.proposal_id and e.session_id == sid
        for e in audit
    )
