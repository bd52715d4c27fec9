"""Two builds of the session workflow for the rolling-upgrade scenario and its test.

Build B loads the tool catalog with a regular activity instead of a local activity, the
change ``tests/versioning`` shows breaking every run recorded before it unless patched.
Here it ships unguarded: pinned runs of build A never replay on B, and runs move to B only
by continuing as new. Both wake often while idle so a short run sees the move."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from durable_loop.core import names
    from durable_loop.core.activity_contracts import ListToolsInput, ToolCatalogOutput
    from durable_loop.core.contracts import SessionEnd, SessionInput
    from durable_loop.core.tools import ToolCatalog

from durable_loop.workflows.session import SessionWorkflow


@workflow.defn(name=names.SESSION_WORKFLOW)
class SessionBuildA(SessionWorkflow):
    """Today's session workflow, waking every second while idle."""

    upgrade_check_every = timedelta(seconds=1)

    @workflow.run
    async def run(self, inp: SessionInput) -> SessionEnd:
        return await super().run(inp)


@workflow.defn(name=names.SESSION_WORKFLOW)
class SessionBuildB(SessionBuildA):
    """The next build: another command at the start of every run."""

    @workflow.run
    async def run(self, inp: SessionInput) -> SessionEnd:
        return await super().run(inp)

    async def _load_catalog(self) -> ToolCatalog:
        out = await workflow.execute_activity(
            names.LIST_TOOLS,
            ListToolsInput(session_id=self._session_id),
            result_type=ToolCatalogOutput,
            start_to_close_timeout=timedelta(seconds=30),
        )
        self._children.configs = {c.name: c for c in out.sub_agents}
        return out.catalog
