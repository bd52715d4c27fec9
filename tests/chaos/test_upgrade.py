"""The ``rolling_upgrade`` chaos scenario at a small size (``durable-loop chaos`` runs it
with ``--load-sessions``, 300 by default): build B of a worker deployment becomes current
while sessions run, idle and wait on held calls on build A; every session moves to B at its
next safe point and A's workers stop once nothing is left on A."""

from __future__ import annotations

import pytest
import pytest_asyncio

from durable_loop.chaos.report import problems_of
from durable_loop.chaos.rig import ChaosRig
from durable_loop.chaos.run import run_on

pytestmark = pytest.mark.chaos
SESSIONS = 6


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def upgrade_rig(tmp_path_factory: pytest.TempPathFactory, scripted_llm):
    rig = ChaosRig(tmp_path_factory.mktemp("upgrade"), scripted_llm, load_sessions=SESSIONS)
    await rig.start()
    try:
        yield rig
    finally:
        await rig.close()


async def test_a_rolling_upgrade_moves_every_session_and_loses_nothing(upgrade_rig):
    [result] = await run_on(upgrade_rig, ["rolling_upgrade"])
    assert result.ok, "\n".join(problems_of(result))
    assert result.survived == len(result.sessions) == SESSIONS
    assert result.duplicates == 0 and result.side_effects == 4  # 2 busy + 2 parked, once each
    details = result.details
    assert (details["busy"], details["idle"], details["parked"]) == (2, 2, 2)
    assert details["lost_messages"] == details["failed_workflow_tasks"] == 0
    assert details["decisions"] == 2
    assert 0 < details["old_build_up_s"] < 60
    assert all(check.clean and check.runs >= 2 for check in result.checks)
