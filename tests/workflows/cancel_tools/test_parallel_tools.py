"""Cancel during a parallel tool turn: an async tool is cancelled, a sync tool that
finishes anyway keeps its result (marked), every call gets a result."""

from __future__ import annotations

import asyncio
import time

from temporalio import activity

from durable_loop.core.errors import ErrorCode
from durable_loop.core.messages import Message
from durable_loop.core.providers.pairing import pair_tool_results
from durable_loop.core.registry import ToolContext, ToolRegistry
from durable_loop.testing import reply
from tests.conftest import settings_for, unique
from tests.workflows.test_run_control import SLOW_S
from tests.workflows.toolkit import ToolLog, recording_tools


def stubborn_tools(log: ToolLog, started: dict[str, asyncio.Event]) -> ToolRegistry:
    registry = recording_tools(log)

    @registry.tool()
    async def sleepy(ctx: ToolContext) -> str:
        """An async tool that would take long: cancelled."""
        log.start("sleepy", {}, ctx)
        started["sleepy"].set()
        await asyncio.sleep(SLOW_S)
        return "woke up"

    @registry.tool()
    def stubborn(ctx: ToolContext) -> str:
        """A sync tool: it notices the cancel and finishes anyway."""
        log.start("stubborn", {}, ctx)
        started["stubborn"].set()
        deadline = time.monotonic() + SLOW_S
        while not activity.is_cancelled() and time.monotonic() < deadline:
            time.sleep(0.02)
        return "finished anyway"

    return registry


async def test_cancel_during_a_parallel_tool_turn_pairs_every_call(loop_worker, scripted_llm):
    model, sid, log = unique("m"), unique("s"), ToolLog()
    loop = asyncio.get_running_loop()
    started = {"sleepy": asyncio.Event(), "stubborn": asyncio.Event()}
    threadsafe = {name: ThreadsafeEvent(loop, event) for name, event in started.items()}
    calls = [
        ("add", {"a": 1, "b": 2}, "c_add"),
        ("sleepy", {}, "c_sleepy"),
        ("stubborn", {}, "c_stubborn"),
        ("nowhere", {}, "c_unknown"),
    ]
    scripted_llm.script(model, [reply.tool_calls(*calls), reply.text("next one")])
    async with loop_worker(stubborn_tools(log, threadsafe)) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        sending = asyncio.create_task(w.sessions.send(sid, "do it all"))
        await asyncio.wait_for(started["sleepy"].wait(), 15)
        await asyncio.wait_for(started["stubborn"].wait(), 15)
        result = await w.sessions.cancel(sid)
        assert await sending == result
        after = await w.sessions.send(sid, "and now?")
        stored = await w.store.read(sid)
    outcomes = {t.call_id: t for t in result.tool_calls}
    assert result.status == "cancelled"
    assert outcomes["c_add"].ok and not outcomes["c_add"].after_cancel
    assert outcomes["c_sleepy"].error_codes == [ErrorCode.TOOL_CALL_CANCELLED]
    assert outcomes["c_stubborn"].ok and outcomes["c_stubborn"].after_cancel
    assert outcomes["c_unknown"].error_codes == [ErrorCode.TOOL_NOT_FOUND]
    results = {m.message.tool_call_id: m for m in stored if m.message.role == "tool"}
    assert set(results) == {"c_add", "c_sleepy", "c_stubborn", "c_unknown"}
    sleepy = results["c_sleepy"].message.envelope
    assert sleepy is not None and sleepy.error_codes == [ErrorCode.TOOL_CALL_CANCELLED]
    stubborn = results["c_stubborn"]
    assert stubborn.meta["after_cancel"] is True
    assert stubborn.message.envelope is not None
    assert stubborn.message.envelope.data == "finished anyway"
    assert any("after the call was cancelled" in w for w in stubborn.message.envelope.warnings)
    # every call has its result right after it: valid for every provider's shape
    messages: list[Message] = [m.message for m in stored]
    assert pair_tool_results(messages) == messages
    assert after.status == "completed" and after.reply == "next one"
    assert log.count("sleepy") == 1 and log.count("stubborn") == 1


class ThreadsafeEvent:
    """Set an asyncio event from a tool's worker thread."""

    def __init__(self, loop: asyncio.AbstractEventLoop, event: asyncio.Event) -> None:
        self.loop, self.event = loop, event

    def set(self) -> None:
        self.loop.call_soon_threadsafe(self.event.set)
