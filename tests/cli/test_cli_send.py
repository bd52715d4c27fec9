"""`durable-loop send --start` to a session that already runs."""

from __future__ import annotations

from durable_loop.testing import reply
from tests.cli.test_cli_proposals import invoke
from tests.conftest import settings_for, unique


async def test_send_with_other_settings_prints_that_they_were_not_applied(
    loop_worker, scripted_llm, temporal_env
):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.text("one"), reply.text("two")])
    async with loop_worker() as w:
        await w.sessions.start_and_send(sid, settings_for(scripted_llm, model), "a")
        sent = await invoke(
            temporal_env,
            "send",
            sid,
            "b",
            "--start",
            "--model",
            unique("other"),
            "--base-url",
            scripted_llm.base_url,
            "--task-queue",
            w.task_queue,
        )
    assert sent.exit_code == 0, sent.output
    assert sent.stdout.strip() == "two"
    assert "the settings sent with this message were not applied (llm differ)" in sent.stderr
