"""Parent workflows for the child-session tests (workflows must live in a module). They
run on a queue of their own and start their children on the durable-loop worker's."""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from durable_loop import ChildSessionResult, SessionSettings, run_child_session
    from durable_loop.core.contracts import UserMessage
    from durable_loop.workflows.child_session import ChildSessionWorkflow, start_child_session


@workflow.defn
class AskTwice:
    """Starts a child with one message and signals it a second one while it runs."""

    @workflow.run
    async def run(
        self, session_id: str, settings: SessionSettings, queue: str
    ) -> ChildSessionResult:
        handle = await start_child_session(session_id, settings, "first?", task_queue=queue)
        await handle.signal(ChildSessionWorkflow.post_message, UserMessage(text="second?"))
        return await handle


@workflow.defn
class AskOnce:
    @workflow.run
    async def run(
        self, session_id: str, settings: SessionSettings, queue: str
    ) -> ChildSessionResult:
        return await run_child_session(session_id, settings, "only?", task_queue=queue)
