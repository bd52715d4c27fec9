"""``durable-loop cancel SESSION [MESSAGE]`` and ``send --interrupt``."""

from __future__ import annotations

import asyncio
import json

from durable_loop.testing import reply
from tests.cli.test_cli_proposals import invoke
from tests.conftest import settings_for, unique
from tests.workflows.test_run_control import SLOW_S, running


async def test_cancel_prints_the_cancelled_result_and_refusals_exit_with_a_code(
    loop_worker, scripted_llm, temporal_env
):
    model, sid = unique("m"), unique("s")
    slow = reply.slow(reply.text("too late"), SLOW_S)
    scripted_llm.script(model, [slow, slow, reply.text("steered")])
    async with loop_worker() as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        sending = asyncio.create_task(w.sessions.send(sid, "essay", message_id="essay-1"))
        await running(w, sid)
        cancelled = await invoke(temporal_env, "cancel", sid, "essay-1", "--json")
        await sending
        again = await invoke(temporal_env, "cancel", sid, "essay-1")
        idle = await invoke(temporal_env, "cancel", sid)
        first = asyncio.create_task(w.sessions.send(sid, "again", message_id="again-1"))
        await running(w, sid)
        steered = await invoke(
            temporal_env, "send", sid, "shorter", "--interrupt", "--task-queue", w.task_queue
        )
        interrupted = await first
    assert cancelled.exit_code == 0, cancelled.output
    result = json.loads(cancelled.output)
    assert result["status"] == "cancelled" and result["message_id"] == "essay-1"
    assert result["error"]["code"] == "MESSAGE_CANCELLED"
    assert result["error"]["message"] == "the message was cancelled"  # not "cancelled: cancelled"
    assert again.exit_code != 0 and "ALREADY_CANCELLED" in again.output
    assert idle.exit_code != 0 and "NOTHING_RUNNING" in idle.output
    assert steered.exit_code == 0, steered.output
    assert "steered" in steered.output
    assert interrupted.status == "cancelled"
