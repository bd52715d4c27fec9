"""Replay evals: a recorded session re-asked of another scripted model, its tool calls
answered from the record (matching calls) or marked new (the rest), nothing run."""

from __future__ import annotations

import json
import os
from typing import Any

from pydantic import JsonValue
from typer.testing import CliRunner

from durable_loop.client.session_data import SessionData
from durable_loop.console import app
from durable_loop.core.registry import ToolContext, ToolRegistry
from durable_loop.core.tools import ToolSpec
from durable_loop.evals.replay.report import write_replay_report
from durable_loop.evals.replay.run import (
    execute_replay,
    load_recorded,
    replay_sessions,
    replay_settings,
)
from durable_loop.evals.replay.tools import NOT_RECORDED, ReplayTools
from durable_loop.testing import reply
from durable_loop.testing.scripted import Reply
from durable_loop.worker.settings import WorkerSettings
from tests.cli.test_cli_errors import assert_one_line
from tests.conftest import settings_for, unique

VALUES = {"a": 1, "b": 2}


def lookup_registry(ran: list[dict[str, Any]]) -> ToolRegistry:
    async def lookup(ctx: ToolContext, **arguments: Any) -> JsonValue:
        ran.append(arguments)
        return {"value": VALUES.get(arguments.get("key", ""), 0)}

    registry = ToolRegistry()
    registry.add(ToolSpec(name="lookup", parameters={"type": "object"}), lookup)
    return registry


def two_messages_with_calls(answer_b: str = "b is 2") -> list[Reply]:
    return [
        reply.tool_call("lookup", {"key": "a"}),
        reply.text("a is 1", usage={"prompt_tokens": 10, "completion_tokens": 3}),
        reply.tool_call("lookup", {"key": "b"}),
        reply.text(answer_b),
    ]


async def test_replay_of_the_same_calls_agrees_and_serves_the_record(
    loop_worker, scripted_llm, tmp_path
):
    recorded_model, sid = unique("recorded"), unique("s")
    scripted_llm.script(recorded_model, two_messages_with_calls())
    ran: list[dict[str, Any]] = []
    async with loop_worker(lookup_registry(ran)) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, recorded_model))
        assert (await w.sessions.send(sid, "what is a?")).reply == "a is 1"
        assert (await w.sessions.send(sid, "and b?")).reply == "b is 2"
        recorded = [await load_recorded(SessionData(w.sessions, w.store.db), sid)]
    assert len(ran) == 2

    same, other = unique("same"), unique("other")
    scripted_llm.script(same, two_messages_with_calls())
    scripted_llm.script(
        other,
        [reply.tool_call("lookup", {"key": "z"}), reply.text("no idea"), reply.text("b is 2")],
    )
    tools = ReplayTools.of([session for session, _ in recorded])
    async with loop_worker(tools.registry()) as w:
        agreeing = await replay_sessions(
            w.sessions, w.store.db, tools, recorded, replay_settings(same)
        )
        differing = await replay_sessions(
            w.sessions, w.store.db, tools, recorded, replay_settings(other)
        )

    assert len(ran) == 2  # no tool body ran during the replays
    assert [(r.same_calls, r.same_answer, r.served, r.new) for r in agreeing] == [
        (True, True, 1, 0),
        (True, True, 1, 0),
    ]
    assert agreeing[0].replay.calls[0].result == {"value": 1}  # the recorded result
    assert (agreeing[0].original.tokens, agreeing[0].replay.tokens) == (28, 28)
    first, second = differing
    assert (first.same_calls, first.same_answer, first.new, first.served) == (False, False, 1, 0)
    assert (first.matched_calls, first.different_calls) == (0, 2)
    assert first.replay.calls[0].result == NOT_RECORDED
    assert (second.same_calls, second.same_answer, second.different_calls) == (False, True, 1)

    directory = write_replay_report(tmp_path, agreeing + differing)
    report = json.loads((directory / "replay.json").read_text())
    assert report["totals"]["messages"] == 4
    assert report["totals"]["same_calls_rate"] == 0.5
    assert report["totals"]["same_answer_rate"] == 0.75
    assert (report["totals"]["calls_served_from_record"], report["totals"]["calls_new"]) == (2, 1)
    assert "| 1 → 1 | yes | 0 (0) | yes | - |" in (directory / "report.md").read_text()


def test_the_command_refuses_a_replay_it_cannot_run(tmp_path):
    runner = CliRunner()
    no_model = runner.invoke(app, ["eval", "--from-sessions", "s1"])
    bad_preset = runner.invoke(
        app, ["eval", "--from-sessions", "s1", "--model", "m", "--preset", "x"]
    )
    missing = str(tmp_path / "missing.db")
    no_store = runner.invoke(
        app, ["eval", "--from-sessions", "s1", "--model", "m", "--db-url", f"sqlite:///{missing}"]
    )
    assert_one_line(no_model, "MISSING_MODEL", "--model")
    assert_one_line(bad_preset, "UNKNOWN_STRATEGY", "recorded, production")
    assert_one_line(no_store, "STORE_NOT_FOUND", "missing.db")


async def test_execute_replay_reads_the_server_and_store_and_writes_the_report(
    loop_worker, scripted_llm, temporal_env, store_url, tmp_path
):
    recorded_model, same, sid = unique("recorded"), unique("same"), unique("s")
    scripted_llm.script(recorded_model, two_messages_with_calls())
    scripted_llm.script(same, two_messages_with_calls(answer_b="b is two"))
    ran: list[dict[str, Any]] = []
    async with loop_worker(lookup_registry(ran)) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, recorded_model))
        await w.sessions.send(sid, "what is a?")
        await w.sessions.send(sid, "and b?")
    address = temporal_env.client.service_client.config.target_host
    keys = os.environ.get("DURABLE_LOOP_TEST_CODEC_KEYS") or None  # as loop_worker encrypts
    worker = WorkerSettings.load(
        temporal={"address": address, "codec_keys": keys}, db_url=store_url
    )

    directory = await execute_replay(worker, [sid], replay_settings(same), tmp_path)

    totals = json.loads((directory / "replay.json").read_text())["totals"]
    assert (totals["same_calls_rate"], totals["same_answer_rate"]) == (1.0, 0.5)
    assert (totals["calls_served_from_record"], totals["calls_new"], len(ran)) == (2, 0, 2)
