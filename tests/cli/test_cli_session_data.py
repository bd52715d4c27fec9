"""`durable-loop fork`, `export` and `import` against a running worker."""

from __future__ import annotations

import json

from durable_loop.client.session_data import FORMAT_VERSION
from durable_loop.testing import reply
from tests.cli.test_cli_proposals import invoke
from tests.conftest import settings_for, unique


async def test_fork_export_and_import_from_the_command_line(
    loop_worker, scripted_llm, temporal_env, store_url, tmp_path
):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model, [reply.text("one"), reply.text("two"), reply.text("fork"), reply.text("copy")]
    )
    async with loop_worker() as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        await w.sessions.send(sid, "first")
        await w.sessions.send(sid, "second")
        where = ["--db-url", store_url]
        fork_id, copy_id = unique("fork"), unique("copy")
        forked = await invoke(
            temporal_env, "fork", sid, "--at", "1", fork_id, *where, "--task-queue", w.task_queue
        )
        out_of_range = await invoke(temporal_env, "fork", sid, "--at", "9", unique("f"), *where)
        exported = await invoke(temporal_env, "export", sid, *where)
        bundle = tmp_path / "bundle.json"
        bundle.write_text(exported.stdout)
        imported = await invoke(
            temporal_env, "import", str(bundle), copy_id, *where, "--task-queue", w.task_queue
        )
        newer = tmp_path / "newer.json"
        newer.write_text(json.dumps({**json.loads(exported.stdout), "format_version": 99}))
        refused = await invoke(temporal_env, "import", str(newer), unique("c"), *where)
        missing = await invoke(temporal_env, "export", unique("nobody"), *where)
        fork_reply = await w.sessions.send(fork_id, "again")
        copy_reply = await w.sessions.send(copy_id, "third")
        fork_status = await w.sessions.status(fork_id)
        copy_status = await w.sessions.status(copy_id)

    assert forked.exit_code == 0, forked.output
    assert f"forked from {sid}@1: 2 messages copied" in forked.stdout
    assert out_of_range.exit_code == 2 and "TURN_OUT_OF_RANGE" in out_of_range.stderr
    assert exported.exit_code == 0, exported.output
    assert json.loads(exported.stdout)["format_version"] == FORMAT_VERSION
    assert imported.exit_code == 0, imported.output
    assert refused.exit_code == 2 and "BUNDLE_VERSION_UNSUPPORTED" in refused.stderr
    assert missing.exit_code == 2 and "SESSION_NOT_FOUND" in missing.stderr
    assert (fork_reply.reply, fork_status.messages_done) == ("fork", 2)
    assert (copy_reply.reply, copy_status.messages_done, copy_status.turns_total) == ("copy", 3, 3)
