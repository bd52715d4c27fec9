"""`durable-loop trace` shows each call's arguments, read from the store: cut at 200
characters by default (table and JSON), whole with --full-args."""

from __future__ import annotations

import asyncio
import json

from typer.testing import CliRunner

from durable_loop.client.trace.models import Trace
from durable_loop.console import app
from durable_loop.testing import reply
from tests.conftest import settings_for, unique
from tests.workflows.toolkit import ToolLog, recording_tools

LABEL = "needle-7f3a " + "x" * 480


async def invoke(*args: str):
    return await asyncio.to_thread(CliRunner().invoke, app, list(args), env={"COLUMNS": "200"})


async def test_trace_shows_call_arguments_bounded_or_whole(
    loop_worker, scripted_llm, temporal_env, store_url
):
    model, sid = unique("m"), unique("s")
    arguments = {"label": LABEL, "seconds": 0}
    scripted_llm.script(
        model,
        [
            reply.tool_calls(("nap", arguments, "c-long"), ("add", {"a": 2, "b": 3}, "c-short")),
            reply.text("done"),
        ],
    )
    address = temporal_env.client.service_client.config.target_host
    async with loop_worker(recording_tools(ToolLog())) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        await w.sessions.send(sid, "nap, then add")
        common = ("trace", sid, "--address", address, "--db-url", store_url)
        bounded = await invoke(*common, "--json")
        whole = await invoke(*common, "--json", "--full-args")
        table = await invoke(*common)

    assert bounded.exit_code == whole.exit_code == table.exit_code == 0, bounded.output
    assert "needle-7f3a" in bounded.stdout
    calls = Trace.model_validate_json(bounded.stdout).turns[0].calls
    long, short = (c.arguments for c in calls)
    assert long is not None and short is not None
    raw = json.dumps(arguments)
    assert (long.truncated, long.chars, long.text) == (True, len(raw), raw[:200])
    assert (short.truncated, json.loads(short.text)) == (False, {"a": 2, "b": 3})

    full = Trace.model_validate_json(whole.stdout).turns[0].calls[0].arguments
    assert full is not None and not full.truncated and json.loads(full.text) == arguments

    assert '{"label": "needle-7f3a' in table.stdout
    assert f"({len(raw)} chars)" in table.stdout
    assert '{"a": 2, "b": 3}' in table.stdout
