"""Long-running tool calls: ``run_tool`` plus a heartbeat, on their own task queue.

The heartbeat tells the server the worker is alive and carries cancellation back: when the
session is cancelled, the next heartbeat delivers it and the tool's coroutine is cancelled
(a sync tool's thread cannot be interrupted; it finishes and its result is discarded).
"""

from __future__ import annotations

import asyncio
import contextlib

from temporalio import activity

from durable_loop.activities.tools import ToolActivities
from durable_loop.toolcalling import names
from durable_loop.toolcalling.contracts import ToolRunInput, ToolRunOutput

MIN_BEAT_S = 0.2


async def _beat(every_s: float, call_id: str) -> None:
    while True:
        activity.heartbeat(call_id)
        await asyncio.sleep(every_s)


class LongToolActivities:
    def __init__(self, tools: ToolActivities) -> None:
        self.tools = tools

    @activity.defn(name=names.RUN_LONG_TOOL)
    async def run_long_tool(self, inp: ToolRunInput) -> ToolRunOutput:
        timeout = activity.info().heartbeat_timeout
        every_s = max(MIN_BEAT_S, timeout.total_seconds() / 3) if timeout else 10.0
        beater = asyncio.create_task(_beat(every_s, inp.call_id))
        try:
            return await self.tools.run_tool(inp)
        finally:
            beater.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beater
