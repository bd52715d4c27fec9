"""A workflow of the reader's own, for doc examples that put durable-loop beside one
(workflow classes must live in an importable module)."""

from temporalio import workflow


@workflow.defn
class MyWorkflow:
    @workflow.run
    async def run(self) -> None:
        pass
