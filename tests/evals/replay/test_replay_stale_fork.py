"""A message whose conversation cannot be rebuilt (the facts changed after the turn before
it: the fork refuses with STALE_VERSION) is reported as not replayed, with the refusal, and
the replay goes on with the session's other messages."""

from __future__ import annotations

import json

import pytest_asyncio

from durable_loop.client.session_data import SessionData
from durable_loop.core.errors import ErrorCode
from durable_loop.evals.replay.report import write_replay_report
from durable_loop.evals.replay.run import load_recorded, replay_sessions, replay_settings
from durable_loop.evals.replay.tools import ReplayTools
from durable_loop.testing import reply
from durable_loop.tools.workspace import workspace_tools
from tests.client.kit import RENAME, session_with_proposal, workspace_store
from tests.conftest import unique


@pytest_asyncio.fixture
async def ws(store_url):
    store = workspace_store(store_url)
    yield store
    await store.close()


async def test_a_message_that_cannot_be_forked_is_reported_and_the_rest_replays(
    loop_worker, scripted_llm, temporal_env, ws, tmp_path
):
    async with loop_worker(workspace_tools(ws)) as w:
        model, sid, pending = await session_with_proposal(w, ws, scripted_llm, temporal_env)
        await w.sessions.confirm(sid, pending.proposal_id, "alice")
        scripted_llm.script(model, [reply.text("noted")])
        await w.sessions.send(sid, "thanks")
        recorded = [await load_recorded(SessionData(w.sessions, w.store.db), sid)]

    replayer = unique("replayer")
    scripted_llm.script(
        replayer, [reply.tool_call("facts_propose", RENAME), reply.text("I proposed a rename.")]
    )
    tools = ReplayTools.of([session for session, _ in recorded])
    async with loop_worker(tools.registry()) as w:
        results = await replay_sessions(
            w.sessions, w.store.db, tools, recorded, replay_settings(replayer)
        )

    first, second = results
    assert (first.not_replayed, first.same_calls, first.same_answer) == (None, True, True)
    assert second.original.text == "thanks"
    assert second.not_replayed is not None
    assert second.not_replayed.startswith(f"{ErrorCode.STALE_VERSION}: the facts changed")
    assert len(scripted_llm.requests(replayer)) == 2  # only the first message was asked

    directory = write_replay_report(tmp_path, results)
    totals = json.loads((directory / "replay.json").read_text())["totals"]
    assert (totals["messages"], totals["not_replayed"], totals["same_calls_rate"]) == (1, 1, 1.0)
    report = (directory / "report.md").read_text()
    assert "1 messages (1 more not replayed: their conversation could not be rebuilt)" in report
    assert "| 2 | thanks | not replayed: STALE_VERSION: the facts changed" in report
