"""Three worker processes on one task queue, one SIGKILLed while 30 sessions are in flight
(marker ``chaos``): every session completes on the others, each transfer ran once, no
caller saw an error, and the histories say how long the killed worker's sessions waited.

The store is PostgreSQL when DURABLE_LOOP_TEST_DB_URL is set (as the issue asks), else one
SQLite file shared by the three processes."""

from __future__ import annotations

import os

import pytest
import pytest_asyncio

from durable_loop.chaos.report import problems_of
from durable_loop.chaos.rig import ChaosRig
from durable_loop.chaos.run import run_on

pytestmark = pytest.mark.chaos
SESSIONS = 30
STICKY_TIMEOUT_S = 2.0


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def load_rig(tmp_path_factory: pytest.TempPathFactory, scripted_llm):
    db_url = os.environ.get("DURABLE_LOOP_TEST_DB_URL") or None
    rig = ChaosRig(
        tmp_path_factory.mktemp("many-workers"),
        scripted_llm,
        db_url=db_url,
        load_sessions=SESSIONS,
        sticky_timeout_s=STICKY_TIMEOUT_S,
    )
    await rig.start()
    try:
        yield rig
    finally:
        await rig.close()


async def test_killing_one_of_three_workers_loses_and_repeats_nothing(load_rig):
    [result] = await run_on(load_rig, ["many_workers_kill"])
    assert result.ok, "\n".join(problems_of(result))
    assert result.survived == len(result.sessions) == SESSIONS
    assert result.duplicates == 0
    assert result.side_effects == SESSIONS
    details = result.details
    assert details["lost_messages"] == 0 and details["caller_errors"] == 0
    handover = details["handover"]
    assert handover["held_sessions"] >= 1
    assert handover["wait_max_s"] is not None
    assert details["sticky_timeout_s"] == STICKY_TIMEOUT_S
    assert all(check.clean and check.messages >= 4 for check in result.checks)
    assert not any(peer.running() for peer in load_rig.peers)
