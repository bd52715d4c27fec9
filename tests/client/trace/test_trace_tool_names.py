"""A mapped tool (a BFCL-style dotted name, an MCP tool's name) shows in the trace under its
model-facing name with its own name beside it: from the catalog in history (also without
the store) and from the schemas the replies record (also without the catalog)."""

from __future__ import annotations

import json

from pydantic import JsonValue

from durable_loop.client.codec import KeyRing, data_converter, new_key
from durable_loop.client.history import fetch_histories
from durable_loop.client.trace import build_trace, decode_run
from durable_loop.client.trace.fetch import load_trace
from durable_loop.client.trace.models import Trace
from durable_loop.core import names
from durable_loop.core.registry import ToolContext, ToolRegistry
from durable_loop.core.reply_meta import LlmReplyMeta
from durable_loop.core.tool_names import provider_safe_name
from durable_loop.core.tools import ToolSpec
from durable_loop.testing import reply
from durable_loop.tools.mcp.naming import safe_tool_name
from tests.client.trace.kit import rendered
from tests.conftest import settings_for, unique

PATH_SCHEMA: dict[str, JsonValue] = {
    "type": "object",
    "properties": {"path": {"type": "string"}},
    "required": ["path"],
}
TEXT_SCHEMA: dict[str, JsonValue] = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
}


def mapped_tools() -> tuple[ToolRegistry, str, str]:
    """``files.read`` (BFCL style) and the MCP tool ``Shout-Text`` of server ``toy``,
    under their provider-safe names, and ``echo``, whose name needs no mapping."""
    read_name = provider_safe_name("files.read")
    shout_name = safe_tool_name("toy", "Shout-Text", {read_name})

    async def read(ctx: ToolContext, path: str) -> JsonValue:
        return {"text": f"contents of {path}"}

    async def shout(ctx: ToolContext, text: str) -> JsonValue:
        return {"text": text.upper()}

    async def echo(ctx: ToolContext, text: str) -> JsonValue:
        return {"text": text}

    registry = ToolRegistry()
    registry.add(ToolSpec(name=read_name, original_name="files.read", parameters=PATH_SCHEMA), read)
    registry.add(
        ToolSpec(name=shout_name, original_name="Shout-Text", parameters=TEXT_SCHEMA), shout
    )
    registry.add(ToolSpec(name="echo", parameters=TEXT_SCHEMA), echo)
    return registry, read_name, shout_name


def joined(trace: Trace) -> dict[str, str | None]:
    return {c.name: c.original_name for t in trace.turns for c in t.calls}


async def test_the_trace_shows_a_mapped_tool_under_both_names(loop_worker, scripted_llm, store_url):
    registry, read_name, shout_name = mapped_tools()
    assert (read_name, shout_name) == ("files_read", "toy_shout_text")
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model,
        [
            reply.tool_calls(
                (read_name, {"path": "a.txt"}, "c-read"),
                (shout_name, {"text": "hi"}, "c-shout"),
                ("echo", {"text": "same"}, "c-echo"),
            ),
            reply.text("Done."),
        ],
    )
    async with loop_worker(registry) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        await w.sessions.send(sid, "read a.txt, shout hi and echo same")
        with_store = await load_trace(w.sessions.client, sid, db_url=store_url)
        history_only = await load_trace(w.sessions.client, sid, db_url=None)
        histories = await fetch_histories(w.sessions.client, names.session_workflow_id(sid))
        rows = await w.store.read(sid)

    expected = {read_name: "files.read", shout_name: "Shout-Text", "echo": None}
    assert joined(with_store) == expected
    assert joined(history_only) == expected  # the catalog the run loaded joins them

    text = rendered(with_store)
    assert "files_read (files.read) c-read ok" in text
    assert "toy_shout_text (Shout-Text) c-shout ok" in text
    assert "echo c-echo ok" in text and "echo (" not in text
    dumped = json.loads(with_store.model_dump_json())
    calls = {c["name"]: c for c in dumped["turns"][0]["calls"]}
    assert calls[read_name]["original_name"] == "files.read"
    assert calls["echo"]["original_name"] is None

    # Without the catalog (a run whose history does not hold it), the replies' recorded
    # schemas join the names.
    runs = [
        decode_run(h.events, h.run_id, i).model_copy(update={"original_names": {}})
        for i, h in enumerate(histories)
    ]
    assert joined(build_trace(sid, histories[0].workflow_id, runs, rows)) == expected
    assert joined(build_trace(sid, histories[0].workflow_id, runs, None)) == {
        name: None for name in expected
    }


async def test_replies_record_the_offered_schemas_once_per_tool_set(loop_worker, scripted_llm):
    registry, read_name, _ = mapped_tools()
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model,
        [
            reply.tool_call(read_name, {"path": "a.txt"}),
            reply.text("It holds the contents of a.txt."),
            reply.text("Nothing else."),
        ],
    )
    async with loop_worker(registry) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        await w.sessions.send(sid, "read a.txt")
        await w.sessions.send(sid, "anything else?")
        rows = await w.store.read(sid)

    replies = [r.meta_as(LlmReplyMeta) for r in rows if r.message.role == "assistant"]
    assert len(replies) == 3
    assert len({m.tools_digest for m in replies}) == 1 and replies[0].tools_digest
    first = replies[0].tool_schemas
    assert first is not None
    assert [(t.name, t.original_name) for t in first] == [
        (read_name, "files.read"),
        ("toy_shout_text", "Shout-Text"),
        ("echo", None),
    ]
    assert first[0].parameters == PATH_SCHEMA
    assert [m.tool_schemas for m in replies[1:]] == [None, None]
    stored_first = next(r.meta for r in rows if r.message.role == "assistant")
    assert "original_name" not in stored_first["tool_schemas"][2]  # unmapped: left out


async def test_an_encrypted_session_joins_the_names_for_whoever_holds_the_keys(
    loop_worker, scripted_llm
):
    registry, read_name, _ = mapped_tools()
    converter = data_converter(KeyRing.parse(new_key("k1")))
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model, [reply.tool_call(read_name, {"path": "a.txt"}, "c-read"), reply.text("Done.")]
    )
    async with loop_worker(registry, data_converter=converter) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        await w.sessions.send(sid, "read a.txt")
        trace = await load_trace(w.sessions.client, sid, db_url=None)  # history only
    assert joined(trace) == {read_name: "files.read"}


async def test_a_decision_on_a_held_mapped_tool_names_it_both_ways(
    loop_worker, scripted_llm, store_url
):
    async def write(ctx: ToolContext, path: str) -> JsonValue:
        return {"written": path}

    registry = ToolRegistry()
    write_name = provider_safe_name("files.write")
    held_spec = ToolSpec(
        name=write_name, original_name="files.write", parameters=PATH_SCHEMA, requires_approval=True
    )
    registry.add(held_spec, write)
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model, [reply.tool_call(write_name, {"path": "b.txt"}, "c-write"), reply.text("Done.")]
    )
    async with loop_worker(registry) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        held = await w.sessions.send(sid, "write b.txt")
        assert held.status == "awaiting_approval", held
        await w.sessions.tool_calls.answer(sid, "c-write", "confirm", "alice")
        await w.sessions.message_result(sid, held.message_id)
        trace = await load_trace(w.sessions.client, sid, db_url=store_url)

    [decision] = trace.entries
    assert (decision.tool, decision.original_name) == ("files_write", "files.write")
    assert "alice approved files_write (files.write) c-write" in rendered(trace)
