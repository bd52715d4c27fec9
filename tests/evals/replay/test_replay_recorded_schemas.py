"""Replay evals offer the tool schemas the session recorded when ``--tools`` is not given;
a session recorded before replies recorded schemas (here: imported from a bundle written
without them) still replays, its tools offered by name only, and the report says so."""

from __future__ import annotations

import json
from typing import Any

from pydantic import JsonValue

from durable_loop.client.session_data import SessionData
from durable_loop.core.registry import ToolContext, ToolRegistry
from durable_loop.core.tool_names import provider_safe_name
from durable_loop.core.tools import ToolSpec
from durable_loop.evals.replay.report import write_replay_report
from durable_loop.evals.replay.run import load_recorded, replay_sessions, replay_settings
from durable_loop.evals.replay.tools import ReplayTools
from durable_loop.testing import reply
from tests.conftest import settings_for, unique

READ = provider_safe_name("files.read")
READ_SCHEMA: dict[str, JsonValue] = {
    "type": "object",
    "properties": {"path": {"type": "string", "description": "relative to the project"}},
    "required": ["path"],
}
NEW_KEYS = ("tools_digest", "tool_schemas")


def files_tools() -> ToolRegistry:
    async def read(ctx: ToolContext, path: str) -> JsonValue:
        return {"text": f"contents of {path}"}

    registry = ToolRegistry()
    spec = ToolSpec(
        name=READ, original_name="files.read", description="Read a file.", parameters=READ_SCHEMA
    )
    registry.add(spec, read)
    return registry


async def record_files_session(loop_worker, scripted_llm) -> str:
    model, sid = unique("recorded"), unique("s")
    scripted_llm.script(
        model, [reply.tool_call(READ, {"path": "a.txt"}), reply.text("It says: contents.")]
    )
    async with loop_worker(files_tools()) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        await w.sessions.send(sid, "what is in a.txt?")
    return sid


async def replay_once(loop_worker, scripted_llm, tools: ReplayTools, recorded) -> list[Any]:
    new_model = unique("new")
    scripted_llm.script(
        new_model, [reply.tool_call(READ, {"path": "a.txt"}), reply.text("It says: contents.")]
    )
    async with loop_worker(tools.registry()) as w:
        results = await replay_sessions(
            w.sessions, w.store.db, tools, recorded, replay_settings(new_model)
        )
    [asked, _] = scripted_llm.requests(new_model)
    offered = {t["function"]["name"]: t["function"] for t in asked.body["tools"]}
    return [results, offered[READ]]


async def test_a_replay_offers_the_recorded_schemas_without_tools(
    loop_worker, scripted_llm, tmp_path
):
    sid = await record_files_session(loop_worker, scripted_llm)
    async with loop_worker(ToolRegistry()) as w:
        recorded = [await load_recorded(SessionData(w.sessions, w.store.db), sid)]
    schema = recorded[0][0].tool_schemas[READ]
    assert (schema.original_name, schema.parameters) == ("files.read", READ_SCHEMA)

    tools = ReplayTools.of([s for s, _ in recorded])
    assert (tools.schema_source, tools.names_only) == ("recorded", [])
    assert tools.spec(READ).original_name == "files.read"
    results, offered = await replay_once(loop_worker, scripted_llm, tools, recorded)
    assert offered["parameters"] == READ_SCHEMA
    assert offered["description"] == "Read a file."
    assert [(r.served, r.new, r.same_calls) for r in results] == [(1, 0, True)]

    directory = write_replay_report(
        tmp_path, results, tool_schemas=tools.schema_source, names_only=tools.names_only
    )
    document = json.loads((directory / "replay.json").read_text())
    assert (document["tool_schemas"], document["tools_by_name_only"]) == ("recorded", [])
    assert "by name only" not in (directory / "report.md").read_text()


async def test_an_old_session_without_recorded_schemas_replays_by_name(
    loop_worker, scripted_llm, tmp_path
):
    sid = await record_files_session(loop_worker, scripted_llm)
    old_id = unique("old")
    async with loop_worker(files_tools()) as w:
        data = SessionData(w.sessions, w.store.db)
        bundle = await data.export(sid)
        rows = [
            row.model_copy(
                update={"meta": {k: v for k, v in row.meta.items() if k not in NEW_KEYS}}
            )
            for row in bundle.rows
        ]
        assert rows != bundle.rows  # the bundle as a version before this one wrote it
        await data.import_bundle(bundle.model_copy(update={"rows": rows}), old_id)
        recorded = [await load_recorded(data, old_id)]
    assert recorded[0][0].tool_schemas == {} and recorded[0][0].tool_names == [READ]

    tools = ReplayTools.of([s for s, _ in recorded])
    assert (tools.schema_source, tools.names_only) == ("names only", [READ])
    results, offered = await replay_once(loop_worker, scripted_llm, tools, recorded)
    assert offered["parameters"]["additionalProperties"] is True
    assert [(r.served, r.new, r.same_calls) for r in results] == [(1, 0, True)]

    directory = write_replay_report(
        tmp_path, results, tool_schemas=tools.schema_source, names_only=tools.names_only
    )
    document = json.loads((directory / "replay.json").read_text())
    assert (document["tool_schemas"], document["tools_by_name_only"]) == ("names only", [READ])
    assert f"offered by name only ({READ}:" in (directory / "report.md").read_text()
