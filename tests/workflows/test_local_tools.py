"""Local tools run as Temporal local activities: no activity task on the server."""

from __future__ import annotations

import asyncio
import json

from durable_loop.core.registry import ToolContext
from durable_loop.testing import reply
from durable_loop.testing.history import EventType, events_of
from durable_loop.tools.ensembles import Ensemble, EnsembleDefaults, registry_from
from tests.conftest import settings_for, unique
from tests.workflows.toolkit import ToolLog


def local_tools(log: ToolLog):
    maths = Ensemble("maths", defaults=EnsembleDefaults(local=True, timeout_s=0.5))

    @maths.tool()
    def multiply(a: int, b: int, ctx: ToolContext) -> int:
        """Multiply two integers."""
        log.start("multiply", {"a": a, "b": b}, ctx)
        return a * b

    @maths.tool()
    async def ponder(seconds: float, ctx: ToolContext) -> str:
        """Think for a while (too long for a local tool)."""
        log.start("ponder", {"seconds": seconds}, ctx)
        await asyncio.sleep(seconds)
        return "thought"

    remote = Ensemble("remote")

    @remote.tool()
    def fetch(key: str, ctx: ToolContext) -> str:
        """An ordinary activity."""
        log.start("fetch", {"key": key}, ctx)
        return f"fetched {key}"

    return registry_from([maths, remote])


async def test_local_tools_skip_the_server_round_trip(loop_worker, scripted_llm):
    model, sid, log = unique("m"), unique("s"), ToolLog()
    scripted_llm.script(
        model,
        [
            reply.tool_calls(
                ("multiply", {"a": 6, "b": 7}), ("fetch", {"key": "k"}), ("ponder", {"seconds": 3})
            ),
            reply.text("42"),
        ],
    )
    registry = local_tools(log)
    assert registry.get("multiply").spec.local and not registry.get("fetch").spec.local
    async with loop_worker(registry) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        result = await w.sessions.send(sid, "6 times 7")
        stored = await w.store.read(sid)
        (history,) = await w.histories(sid)
    assert [(t.name, t.ok, t.error_codes) for t in result.tool_calls] == [
        ("multiply", True, []),
        ("fetch", True, []),
        ("ponder", False, ["TOOL_TIMEOUT"]),
    ]
    envelopes = [json.loads(m.message.envelope.to_content()) for m in stored if m.message.envelope]
    assert envelopes[0]["data"] == 42 and envelopes[1]["data"] == "fetched k"
    scheduled = [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in events_of(history, EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
    ]
    assert scheduled.count("run_tool") == 1, "only the remote tool is a server-side activity"
    markers = events_of(history, EventType.EVENT_TYPE_MARKER_RECORDED)
    local_runs = [m for m in markers if b"run_tool" in m.SerializeToString()]
    assert len(local_runs) == 2
