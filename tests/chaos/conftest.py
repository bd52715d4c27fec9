"""One chaos rig per module: a dev server on a SQLite file, a worker subprocess and the
session's scripted LLM endpoint. Scenarios run one after another on it."""

from __future__ import annotations

import os

import pytest
import pytest_asyncio

from durable_loop.chaos.rig import ChaosRig


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def chaos_rig(tmp_path_factory: pytest.TempPathFactory, scripted_llm):
    db_url = os.environ.get("DURABLE_LOOP_TEST_DB_URL") or None  # PostgreSQL when set
    rig = ChaosRig(tmp_path_factory.mktemp("chaos"), scripted_llm, db_url=db_url)
    await rig.start()
    try:
        yield rig
    finally:
        await rig.close()
