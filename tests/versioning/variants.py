"""Variants of the session workflow for the versioning tests (never deployed).

The first demonstrated change: the tool catalog is loaded by a regular activity (so it could
run on another worker and retry with its own timeout) instead of a local activity. That
changes the commands a run produces, so a history recorded before the change no longer
replays, unless the change is guarded by ``workflow.patched``.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from durable_loop.core import names
    from durable_loop.core.activity_contracts import ListToolsInput, ToolCatalogOutput
    from durable_loop.core.contracts import SessionEnd, SessionInput
    from durable_loop.core.sub_agents import SubAgentApprovals
    from durable_loop.core.tools import ToolCatalog

from durable_loop.workflows.approvals import ApprovalBook
from durable_loop.workflows.run_control import RunControl
from durable_loop.workflows.session import SessionWorkflow
from durable_loop.workflows.sub_agent_children import SubAgentChildren

PATCH = "catalog-by-activity"


async def catalog_by_activity(session_id: str) -> ToolCatalog:
    out = await workflow.execute_activity(
        names.LIST_TOOLS,
        ListToolsInput(session_id=session_id),
        result_type=ToolCatalogOutput,
        start_to_close_timeout=timedelta(seconds=30),
    )
    return out.catalog


@workflow.defn(name=names.SESSION_WORKFLOW)
class PatchedSession(SessionWorkflow):
    """Step 1 of a change: old runs keep the old path, new runs take the new one."""

    @workflow.run
    async def run(self, inp: SessionInput) -> SessionEnd:
        return await super().run(inp)

    async def _load_catalog(self) -> ToolCatalog:
        if workflow.patched(PATCH):
            return await catalog_by_activity(self._session_id)
        return await super()._load_catalog()


@workflow.defn(name=names.SESSION_WORKFLOW)
class UnpatchedSession(SessionWorkflow):
    """The same change made carelessly: breaks every run recorded before it."""

    @workflow.run
    async def run(self, inp: SessionInput) -> SessionEnd:
        return await super().run(inp)

    async def _load_catalog(self) -> ToolCatalog:
        return await catalog_by_activity(self._session_id)


@workflow.defn(name=names.SESSION_WORKFLOW)
class PatchDeprecatedSession(SessionWorkflow):
    """Step 2, once no run from before step 1 is left: only the new path remains."""

    @workflow.run
    async def run(self, inp: SessionInput) -> SessionEnd:
        return await super().run(inp)

    async def _load_catalog(self) -> ToolCatalog:
        workflow.deprecate_patch(PATCH)
        return await catalog_by_activity(self._session_id)


class UnguardedSubAgentChildren(SubAgentChildren):
    """Patch ``sub-agent-calls-wait``'s change without its guard."""

    def report(self, report: SubAgentApprovals) -> None:
        super().report(report)
        self.answers_waiting = self.answers_waiting or bool(report.pending)


@workflow.defn(name=names.SESSION_WORKFLOW)
class UnguardedSubAgentWait(SessionWorkflow):
    """A sub-agent's held call makes the send answer and the status change at once, as
    patch ``sub-agent-calls-wait`` does, but for runs recorded before it too."""

    @workflow.run
    async def run(self, inp: SessionInput) -> SessionEnd:
        self._children = UnguardedSubAgentChildren()
        return await super().run(inp)


class UnguardedRunControl(RunControl):
    """Patch ``cancel-parked``'s change without its guard."""

    def start(self) -> None:
        super().start()
        self.cancels_parked = True


@workflow.defn(name=names.SESSION_WORKFLOW)
class UnguardedCancelParked(SessionWorkflow):
    """A cancel of a parked message settles its held calls, as patch ``cancel-parked``
    does, but for runs recorded before it too."""

    @workflow.run
    async def run(self, inp: SessionInput) -> SessionEnd:
        self._control = UnguardedRunControl()
        return await super().run(inp)


class UnguardedApprovalBook(ApprovalBook):
    """Patch ``decision-rules``' change without its guard."""

    def start(self) -> None:
        super().start()
        self.strict = True


@workflow.defn(name=names.SESSION_WORKFLOW)
class UnguardedDecisionRules(SessionWorkflow):
    """Decisions checked by the rules of patch ``decision-rules`` (bound to the hold,
    printable names, refused by the Update's handler), for runs recorded before it too."""

    @workflow.run
    async def run(self, inp: SessionInput) -> SessionEnd:
        self._approvals = UnguardedApprovalBook(
            inp.session_id, inp.settings, self._approvals.state()
        )
        return await super().run(inp)
