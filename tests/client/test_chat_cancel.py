"""Ctrl-C in ``durable-loop chat`` cancels the running message, not the session."""

from __future__ import annotations

import asyncio
import os
import signal

from durable_loop.testing import reply
from tests.client.test_chat import CLI, address_of
from tests.conftest import settings_for, unique
from tests.workflows.test_run_control import SLOW_S, running


async def read_until(stream: asyncio.StreamReader, marker: str, timeout_s: float = 30) -> str:
    seen: list[str] = []
    while not any(marker in line for line in seen):
        line = await asyncio.wait_for(stream.readline(), timeout_s)
        if not line:
            break
        seen.append(line.decode())
    return "".join(seen)


async def test_ctrl_c_cancels_the_turn_and_the_chat_goes_on(
    loop_worker, scripted_llm, temporal_env, tmp_path
):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.slow(reply.text("too late"), SLOW_S), reply.text("here")])
    settings_file = tmp_path / "settings.json"
    settings_file.write_text(settings_for(scripted_llm, model).model_dump_json())
    async with loop_worker() as w:
        w.sessions.started_workflow_ids.add(f"session-{sid}")  # replayed on teardown
        process = await asyncio.create_subprocess_exec(
            CLI,
            "chat",
            sid,
            "--settings",
            str(settings_file),
            "--address",
            address_of(temporal_env),
            "--task-queue",
            w.task_queue,
            "--poll",
            "0.1",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"},
        )
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(b"write a long essay\n")
        await process.stdin.drain()
        await running(w, sid)
        process.send_signal(signal.SIGINT)
        cut = await read_until(process.stdout, "MESSAGE_CANCELLED")
        process.stdin.write(b"are you still there?\n/quit\n")
        await process.stdin.drain()
        rest, err = await asyncio.wait_for(process.communicate(), 60)
        status = await w.sessions.status(sid)
    assert "cancelling this message" in cut and "status cancelled" in cut
    assert process.returncode == 0, err.decode()
    assert "assistant> here" in rest.decode()
    assert status.messages_done == 2
