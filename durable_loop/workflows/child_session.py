"""A session run as a child of the user's own workflow (``ChildSession``).

Workflow code cannot send an Update to another workflow, so a parent cannot use the
session's ``send_message``. A child session takes its messages in its start input instead,
answers them one after another with the session workflow's own loop, then ends and returns
every :class:`RunResult` as its result, which the parent awaits like any child workflow.
The parent may add messages with the ``post_message`` signal while the child runs, and
continues the conversation in a later child by passing the result's ``carried`` state.

The child's workflow id is the session's (``session-<id>``), so people decide its
proposals, and tools read its status and trace, exactly as for a standalone session.
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from durable_loop.core import names
    from durable_loop.core.catalog import refuse_unreliable_enforced
    from durable_loop.core.config import SessionSettings
    from durable_loop.core.contracts import (
        CarriedState,
        ChildSessionInput,
        ChildSessionResult,
        RunResult,
        SessionInput,
        UserMessage,
    )
    from durable_loop.core.errors import ConfigError, ErrorCode
    from durable_loop.core.messages import Usage

from durable_loop.workflows.session import SessionWorkflow
from durable_loop.workflows.visibility import MEMO_SESSION, MEMO_TITLE

CHILD_DONE = "answered"
"""``SessionEnd.reason`` of a child session that answered its messages."""


@workflow.defn(name=names.CHILD_SESSION_WORKFLOW)
class ChildSessionWorkflow(SessionWorkflow):
    """The session workflow, closing as soon as its queued messages are answered.

    The session's Queries, Signals and Updates all work on it; ``send_message`` is refused
    (``SESSION_CLOSED``) because the child ends once its queue is empty.
    """

    @workflow.init
    def __init__(self, inp: ChildSessionInput) -> None:
        carried = inp.carried or CarriedState(
            next_seq=0, turn_index=0, messages_done=0, run_index=0, usage=Usage()
        )
        queued = carried.model_copy(update={"queue": [*carried.queue, *inp.messages]})
        self._session_input = SessionInput(
            session_id=inp.session_id, settings=inp.settings, carried=queued
        )
        super().__init__(self._session_input)
        self._answered: list[RunResult] = []
        # A closing session answers what is queued, then ends (and never continues as new).
        self._closing = CHILD_DONE

    # Another workflow type with its own input and result, reusing the session's handlers
    # and loop: the override changes the signature on purpose.
    @workflow.run
    async def run(self, inp: ChildSessionInput) -> ChildSessionResult:  # type: ignore[override]
        end = await super().run(self._session_input)
        carried = self._carry(self._session_input).carried
        assert carried is not None
        return ChildSessionResult(
            session_id=inp.session_id, results=self._answered, end=end, carried=carried
        )

    def _keep_result(self, result: RunResult) -> None:
        super()._keep_result(result)
        self._answered.append(result)


def child_session_input(
    session_id: str,
    settings: SessionSettings,
    messages: tuple[str | UserMessage, ...],
    carried: CarriedState | None = None,
) -> ChildSessionInput:
    if not messages:
        raise ApplicationError(
            "a child session needs at least one message",
            type=ErrorCode.INVALID_ARGS,
            non_retryable=True,
        )
    try:
        refuse_unreliable_enforced(settings)
    except ConfigError as err:
        # Raised in workflow code, a plain exception would fail the task and retry forever.
        raise ApplicationError(str(err), type=err.code, non_retryable=True) from None
    return ChildSessionInput(
        session_id=session_id,
        settings=settings,
        messages=[m if isinstance(m, UserMessage) else UserMessage(text=m) for m in messages],
        carried=carried,
    )


async def start_child_session(
    session_id: str,
    settings: SessionSettings,
    *messages: str | UserMessage,
    carried: CarriedState | None = None,
    task_queue: str | None = None,
    **options: Any,
) -> workflow.ChildWorkflowHandle[ChildSessionWorkflow, ChildSessionResult]:
    """From workflow code: start session ``session_id`` as a child that answers
    ``messages``. Await the handle for the :class:`ChildSessionResult`; signal more messages
    with ``handle.signal(ChildSessionWorkflow.post_message, UserMessage(text=...))``.

    ``task_queue``: where durable-loop's workflows and activities run (a worker with
    :class:`~durable_loop.worker.plugin.DurableLoopPlugin`); default: the parent's queue.
    ``options`` go to :func:`temporalio.workflow.start_child_workflow` (e.g.
    ``parent_close_policy``, ``execution_timeout``).
    """
    memo = {MEMO_SESSION: session_id}
    if settings.title:
        memo[MEMO_TITLE] = settings.title
    return await workflow.start_child_workflow(
        ChildSessionWorkflow.run,
        child_session_input(session_id, settings, messages, carried),
        id=names.session_workflow_id(session_id),
        task_queue=task_queue,
        memo=options.pop("memo", memo),
        **options,
    )


async def run_child_session(
    session_id: str,
    settings: SessionSettings,
    *messages: str | UserMessage,
    carried: CarriedState | None = None,
    task_queue: str | None = None,
    **options: Any,
) -> ChildSessionResult:
    """:func:`start_child_session` and wait for its result."""
    handle = await start_child_session(
        session_id, settings, *messages, carried=carried, task_queue=task_queue, **options
    )
    return await handle
