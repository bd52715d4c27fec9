"""A parent that imports durable_loop at module level, without passing it through the
sandbox: its models are then the sandbox's own copies."""

from __future__ import annotations

from temporalio import workflow

from durable_loop import ChildSessionResult, SessionSettings, run_child_session


@workflow.defn
class AskPlainly:
    @workflow.run
    async def run(
        self, session_id: str, settings: SessionSettings, queue: str
    ) -> ChildSessionResult:
        return await run_child_session(session_id, settings, "plain?", task_queue=queue)
