"""A recovery an application registers runs in the loop like a built-in one, at its stage,
and is named in RunResult.recoveries (docs/recoveries.md)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from durable_loop.core.config import RuntimeConfig
from durable_loop.core.recoveries import REGISTRY, register
from durable_loop.testing import reply
from tests.core.recoveries.full_stop import FULL_STOP
from tests.workflows.test_endings import run_session


@pytest.fixture
def full_stop() -> Iterator[str]:
    """Asked for before loop_worker, so it is still registered when the worker's
    histories replay at teardown."""
    register(FULL_STOP)
    yield FULL_STOP.name
    REGISTRY.pop(FULL_STOP.name)


async def test_a_registered_recovery_sends_the_answer_back_once(
    full_stop, loop_worker, scripted_llm
):
    result, requests, _, _ = await run_session(
        loop_worker,
        scripted_llm,
        [reply.text("Done"), reply.text("Done, still")],
        RuntimeConfig(recoveries={full_stop: {"text": "Finish the sentence."}}),
    )
    assert result.status == "completed" and result.reply == "Done, still"
    assert result.recoveries == [full_stop]
    assert requests[1].messages[-1] == {"role": "user", "content": "Finish the sentence."}


async def test_a_session_that_does_not_name_it_is_not_judged_by_it(
    full_stop, loop_worker, scripted_llm
):
    result, requests, _, _ = await run_session(loop_worker, scripted_llm, [reply.text("Done")])
    assert result.reply == "Done" and result.recoveries == [] and len(requests) == 1
