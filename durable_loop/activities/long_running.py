"""Long-running tool calls: ``run_tool`` under its own activity name, on its own task queue.

``run_tool`` heartbeats whenever its activity has a heartbeat timeout, and the workflow
gives every long-running call one; the heartbeat carries cancellation back, so when the
session is cancelled the tool's coroutine is cancelled (a sync tool's thread cannot be
interrupted: it finishes and its result is discarded). The separate name makes the
placement visible in history and lets a worker pool serve only these calls.
"""

from __future__ import annotations

from temporalio import activity

from durable_loop.activities.tools import ToolActivities
from durable_loop.core import names
from durable_loop.core.activity_contracts import ToolRunInput, ToolRunOutput


class LongToolActivities:
    def __init__(self, tools: ToolActivities) -> None:
        self.tools = tools

    @activity.defn(name=names.RUN_LONG_TOOL)
    async def run_long_tool(self, inp: ToolRunInput) -> ToolRunOutput:
        return await self.tools.run_tool(inp)
