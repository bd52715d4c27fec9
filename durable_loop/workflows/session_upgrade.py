"""When a session run ends and what the next run takes: continue-as-new, and the move of a
pinned session to its deployment's new build (Worker Versioning, docs/versioning.md).

Mixed into :class:`~durable_loop.workflows.session.SessionWorkflow`; the run loop asks
:meth:`SessionUpgrade._should_continue_as_new` after each message and waits for work with
:meth:`SessionUpgrade._wait_for_work`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import timedelta
from typing import NoReturn

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from durable_loop.core.config import SessionSettings
    from durable_loop.core.contracts import (
        CarriedState,
        ParkedMessage,
        RunResult,
        SessionInput,
        UserMessage,
    )

from durable_loop.workflows.approvals import ApprovalBook
from durable_loop.workflows.message_bodies import MessageBodies
from durable_loop.workflows.proposals import ProposalBook
from durable_loop.workflows.session_cursor import SessionCursor
from durable_loop.workflows.sub_agent_children import SubAgentChildren

UPGRADE_PATCH = "upgrade-on-continue-as-new"
"""A pinned session on a versioned worker moves to its deployment's new target version at
continue-as-new (docs/versioning.md); runs recorded before it never did."""


def on_versioned_worker() -> bool:
    """The task runs on a worker of a named deployment. An unversioned worker still reports
    a version (its build id, no deployment name) live, and a replay may not."""
    version = workflow.info().get_current_deployment_version()
    return version is not None and bool(version.deployment_name)


class SessionUpgrade:
    """Continue-as-new and the move to a new build, for the session workflow."""

    upgrade_check_every = timedelta(minutes=5)
    """How often an idle session on a versioned worker wakes to learn whether its
    deployment has a new target version: the server tells a run only with a workflow task.
    Each wake costs 5 history events (timer started and fired, one workflow task)."""

    _settings: SessionSettings
    _cursor: SessionCursor
    _messages_done: int
    _run_index: int
    _queue: list[UserMessage]
    _results: dict[str, RunResult]
    _bodies: MessageBodies
    _in_progress: str | None
    _closing: str | None
    _parked: ParkedMessage | None
    _proposals: ProposalBook
    _approvals: ApprovalBook
    _children: SubAgentChildren
    _resumable: Callable[[], bool]
    _takes_message: Callable[[], bool]
    _queued_ids: Callable[[], list[str]]

    async def _wait_for_work(self, inp: SessionInput) -> None:
        """Wait for a message, a decision or the close. Pinned to a build of a versioned
        worker (``upgrade-on-continue-as-new`` patch), wake every
        :attr:`upgrade_check_every` while waiting, and continue as new when the session
        may move to a new build or its history is past its bound."""

        def ready() -> bool:
            return self._resumable() or self._takes_message() or self._closing is not None

        versioned = on_versioned_worker()
        if ready() or not (versioned and workflow.patched(UPGRADE_PATCH)):
            await workflow.wait_condition(ready)
            return
        while not ready():
            if workflow.all_handlers_finished() and self._should_continue_as_new():
                self._continue_as_new(inp)
            with contextlib.suppress(TimeoutError):
                await workflow.wait_condition(ready, timeout=self.upgrade_check_every)

    def _continue_as_new(self, inp: SessionInput) -> NoReturn:
        if self._moves_to_new_build():
            workflow.continue_as_new(
                self._carry(inp),
                initial_versioning_behavior=workflow.ContinueAsNewVersioningBehavior.AUTO_UPGRADE,
            )
        workflow.continue_as_new(self._carry(inp))

    def _moves_to_new_build(self) -> bool:
        """The deployment has a new target version and the session is at a safe point for
        it: no call held for a person or in flight, no proposal pending (the new run starts
        on the new build, and takes everything ``_carry`` carries). An unversioned worker
        never moves: a dev server may report the version changed to a run of one, and a
        replay does not, so the patch is only asked on a versioned worker."""
        if not on_versioned_worker():
            return False
        if not workflow.info().is_target_worker_deployment_version_changed():
            return False
        if self._in_progress is not None or self._parked is not None:
            return False
        if self._approvals.pending or self._proposals.pending or self._children.waiting():
            return False
        return workflow.patched(UPGRADE_PATCH)

    def _should_continue_as_new(self) -> bool:
        return self._history_due() or self._moves_to_new_build()

    def _history_due(self) -> bool:
        info = workflow.info()
        limit = self._settings.runtime.history.continue_as_new_after_events
        return info.is_continue_as_new_suggested() or info.get_current_history_length() > limit

    def _carry(self, inp: SessionInput) -> SessionInput:
        recent = list(self._results.values())[-8:]
        carried = CarriedState(
            next_seq=self._cursor.next_seq,
            turn_index=self._cursor.turn_index,
            messages_done=self._messages_done,
            run_index=self._run_index + 1,
            usage=self._cursor.usage,
            queue=self._queue,
            recent_results=recent,
            tail=self._cursor.tail,
            proposals=self._proposals.state(),
            dedup=self._cursor.dedup,
            message_digests=self._bodies.of([*(r.message_id for r in recent), *self._queued_ids()]),
            breaker=self._cursor.breaker,
            approvals=self._approvals.state(),
            parked=self._parked,
        )
        return SessionInput(session_id=inp.session_id, settings=self._settings, carried=carried)
