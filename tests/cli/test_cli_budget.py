"""`durable-loop budget` against a running session: show, change, refuse."""

from __future__ import annotations

import json
import re
import shlex

from durable_loop.core.config import RuntimeConfig
from durable_loop.testing import reply
from tests.cli.test_cli_proposals import invoke
from tests.conftest import settings_for, unique


async def test_show_raise_and_refuse_from_the_command_line(loop_worker, scripted_llm, temporal_env):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.text("one"), reply.text("two")])
    runtime = RuntimeConfig(max_session_tokens=10)
    async with loop_worker() as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=runtime))
        await w.sessions.send(sid, "a")
        shown = await invoke(temporal_env, "budget", sid)
        raised = await invoke(
            temporal_env, "budget", sid, "--max-session-tokens", "100", "--as", "ops"
        )
        as_json = await invoke(
            temporal_env, "budget", sid, "--max-turns", "3", "--as", "ops", "--json"
        )
        anonymous = await invoke(temporal_env, "budget", sid, "--max-turns", "3")
        both = await invoke(
            temporal_env, "budget", sid, "--max-session-tokens", "5", "--unlimited", "--as", "ops"
        )
        missing = await invoke(temporal_env, "budget", unique("nope"))
        after = await w.sessions.send(sid, "b")

    assert shown.exit_code == 0
    assert shown.stdout.strip() == "max_session_tokens 10, max_turns 12; used 15 tokens"
    assert raised.exit_code == 0, raised.output
    assert f"budget of {sid} set by ops: max_session_tokens 100, max_turns 12" in raised.stdout
    assert json.loads(as_json.stdout)["budget"] == {"max_session_tokens": 100, "max_turns": 3}
    assert anonymous.exit_code == 2 and "INVALID_SETTING" in anonymous.output
    assert both.exit_code == 2 and "not both" in both.output
    assert missing.exit_code == 2 and "SESSION_NOT_FOUND" in missing.output
    assert after.reply == "two"


async def test_the_budget_exceeded_hint_runs_as_written(loop_worker, scripted_llm, temporal_env):
    """The command the BUDGET_EXCEEDED message names, with its placeholders filled in, is
    accepted as it stands (it once lacked the required --as)."""
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.text("one"), reply.text("two")])
    runtime = RuntimeConfig(max_session_tokens=10)
    async with loop_worker() as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=runtime))
        await w.sessions.send(sid, "a")
        refused = await invoke(temporal_env, "send", sid, "b", "--task-queue", w.task_queue)
        hint = re.search(r"`(durable-loop budget [^`]+)`", refused.stderr)
        assert hint is not None, refused.stderr
        filled = {"SESSION": sid, "N": "100", "WHO": "ops"}
        argv = [filled.get(word, word) for word in shlex.split(hint.group(1))]
        raised = await invoke(temporal_env, *argv[1:])
        after = await w.sessions.send(sid, "c")
    assert refused.exit_code == 1 and "error BUDGET_EXCEEDED" in refused.stderr
    assert raised.exit_code == 0, raised.output
    assert after.reply == "two"
