"""Session-wide deduplication: decided from workflow state, so it survives worker restarts
and continue-as-new."""

from __future__ import annotations

import json

from durable_loop.activities.appends import DEDUPLICATED_WARNING
from durable_loop.core.config import RuntimeConfig
from durable_loop.core.dedup import DEDUP_KEPT, record_result
from durable_loop.core.registry import ToolContext, ToolFailure, ToolRegistry
from durable_loop.testing import reply
from durable_loop.worker.builder import WorkerTuning
from tests.conftest import settings_for, unique
from tests.workflows.toolkit import ToolLog


def dedup_tools(log: ToolLog) -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool(dedupe=True)
    def lookup(key: str, ctx: ToolContext, limit: int = 3) -> str:
        """An expensive lookup worth doing once per session."""
        log.start("lookup", {"key": key, "limit": limit}, ctx)
        return f"value of {key}"

    @registry.tool()
    def now_playing(ctx: ToolContext) -> str:
        """Not deduplicated: its answer changes."""
        log.start("now_playing", {}, ctx)
        return f"track {len(log.executions)}"

    @registry.tool(dedupe=True)
    def flaky_lookup(key: str, ctx: ToolContext) -> str:
        """Fails: failures are not recorded for deduplication."""
        log.start("flaky_lookup", {"key": key}, ctx)
        raise ToolFailure("TOOL_ERROR", "backend down")

    return registry


def envelope_at(stored, seq) -> dict:
    row = next(m for m in stored if m.seq == seq)
    return json.loads(row.message.envelope.to_content())


async def test_exact_repeat_in_a_later_message_returns_the_recorded_result(
    loop_worker, scripted_llm
):
    model, sid, log = unique("m"), unique("s"), ToolLog()
    scripted_llm.script(
        model,
        [
            reply.tool_calls(("lookup", {"key": "k1", "limit": 3}), ("now_playing", {})),
            reply.text("first"),
            reply.tool_calls(
                ("lookup", '{"limit": 3, "key": "k1"}'),
                ("now_playing", {}),
                ("lookup", {"key": "k2"}),
            ),
            reply.text("second"),
        ],
    )
    async with loop_worker(dedup_tools(log)) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        await w.sessions.send(sid, "look up k1")
        second = await w.sessions.send(sid, "again")
        stored = await w.store.read(sid)
        tail = await w.sessions.tail(sid, limit=50)

    assert sorted(log.names()) == ["lookup", "lookup", "now_playing", "now_playing"]
    assert sorted(e.args["key"] for e in log.executions if e.name == "lookup") == ["k1", "k2"]
    outcomes = [(t.name, t.executed, t.deduplicated, t.ok) for t in second.tool_calls]
    assert outcomes == [
        ("lookup", False, True, True),
        ("now_playing", True, False, True),
        ("lookup", True, False, True),
    ]
    first_result_seq = 2
    repeat_seq = next(
        m.seq for m in stored if m.message.tool_call_id == "call_0_lookup" and m.seq > 5
    )
    original, repeat = envelope_at(stored, first_result_seq), envelope_at(stored, repeat_seq)
    assert repeat["data"] == original["data"] == "value of k1"
    assert repeat["deduplicated"] is True and "deduplicated" not in original
    assert repeat["reused"] is True and "reused" not in original
    assert DEDUPLICATED_WARNING in repeat["warnings"]
    meta = next(m.meta for m in stored if m.seq == repeat_seq)
    assert meta == {"reused_from": first_result_seq, "deduplicated": True}
    assert any(e.seq == repeat_seq and e.preview == "deduplicated" for e in tail.entries)
    assert second.status == "completed" and second.reply == "second"


async def test_failed_calls_are_not_deduplicated(loop_worker, scripted_llm):
    model, sid, log = unique("m"), unique("s"), ToolLog()
    scripted_llm.script(
        model,
        [
            reply.tool_call("flaky_lookup", {"key": "k"}),
            reply.text("it failed"),
            reply.tool_call("flaky_lookup", {"key": "k"}),
            reply.text("failed again"),
        ],
    )
    async with loop_worker(dedup_tools(log)) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        await w.sessions.send(sid, "try")
        again = await w.sessions.send(sid, "retry")
    assert log.count("flaky_lookup") == 2
    assert [(t.executed, t.deduplicated) for t in again.tool_calls] == [(True, False)]


async def test_deduplication_survives_a_worker_restart(loop_worker, scripted_llm):
    model, sid, log = unique("m"), unique("s"), ToolLog()
    queue = unique("restart-q")
    scripted_llm.script(
        model,
        [
            reply.tool_call("lookup", {"key": "k1"}),
            reply.text("first"),
            reply.tool_call("lookup", {"key": "k1"}),
            reply.text("second"),
        ],
    )
    # No workflow cache, so no sticky queue: the time-skipping server never times one out,
    # and the second worker must rebuild the session from history alone.
    no_cache = WorkerTuning(max_cached_workflows=0)
    async with loop_worker(dedup_tools(log), task_queue=queue, tuning=no_cache) as first_worker:
        await first_worker.sessions.start(sid, settings_for(scripted_llm, model))
        await first_worker.sessions.send(sid, "look up k1")
    assert log.count("lookup") == 1
    async with loop_worker(dedup_tools(log), task_queue=queue) as second_worker:
        again = await second_worker.sessions.send(sid, "look it up again")
        stored = await second_worker.store.read(sid)
    assert log.count("lookup") == 1, "the new worker must not run the tool again"
    assert [(t.executed, t.deduplicated) for t in again.tool_calls] == [(False, True)]
    assert sum(1 for m in stored if m.message.envelope and m.message.envelope.deduplicated) == 1


async def test_deduplication_survives_continue_as_new(loop_worker, scripted_llm):
    model, sid, log = unique("m"), unique("s"), ToolLog()
    scripted_llm.script(
        model,
        [reply.tool_call("lookup", {"key": "k1"}), reply.text("first")],
        then=reply.text("ok"),
    )
    runtime = RuntimeConfig(continue_as_new_after_events=200)
    async with loop_worker(dedup_tools(log)) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=runtime))
        await w.sessions.send(sid, "look up k1")
        for index in range(60):
            if (await w.sessions.status(sid)).run_index > 0:
                break
            await w.sessions.send(sid, f"chat {index}")
        assert (await w.sessions.status(sid)).run_index > 0, "no continue-as-new happened"
        scripted_llm.script(model, [reply.tool_call("lookup", {"key": "k1"}), reply.text("again")])
        again = await w.sessions.send(sid, "look up k1 again")
    assert log.count("lookup") == 1
    assert [(t.executed, t.deduplicated) for t in again.tool_calls] == [(False, True)]


def test_the_dedup_map_is_bounded_and_keeps_the_newest():
    dedup: dict[str, int] = {}
    for seq in range(DEDUP_KEPT + 10):
        record_result(dedup, "lookup", f"sha{seq}", seq)
    assert len(dedup) == DEDUP_KEPT
    assert "lookup:sha0" not in dedup and dedup[f"lookup:sha{DEDUP_KEPT + 9}"] == DEDUP_KEPT + 9
