"""``SessionData``: fork a session at a turn, export it as a bundle, import a bundle.

A fork or an import is a new session workflow started with a :class:`CarriedState` built
from the copied transcript rows, exactly what a run hands the next across continue-as-new:
the workflow code does not know it was forked. Nothing after the fork point runs again.
What the workflow held in memory at the fork point is not carried: pending tool calls and
proposals (a person decides again in the fork, against the fork's own fingerprints),
queued messages, standing approvals. Decided tool calls are carried as their results in
the transcript, settled proposals and committed facts as the workspace holds them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from temporalio.client import Client, WorkflowHandle
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from durable_loop.client.search_attributes import registered
from durable_loop.client.session_data.bundle import (
    SessionBundle,
    decisions_in,
    without_secrets,
)
from durable_loop.client.session_data.carried import carried_from, fork_cut
from durable_loop.client.sessions import SessionClient
from durable_loop.core import names
from durable_loop.core.catalog import refuse_unreliable_enforced
from durable_loop.core.config import SessionSettings
from durable_loop.core.contracts import CarriedState, SessionEnd, SessionInput
from durable_loop.core.errors import DurableLoopError, ErrorCode
from durable_loop.core.session_ids import check_session_id
from durable_loop.store.database import Database
from durable_loop.store.session_copy import (
    RowCopy,
    WorkspaceCopy,
    copy_transcript,
    has_transcript,
    transcript_rows,
    workspace_copy,
    write_transcript,
    write_workspace,
)
from durable_loop.workflows.visibility import MEMO_SESSION, MEMO_TITLE

MEMO_FORKED_FROM = "forked_from"
"""Memo of a fork: ``SESSION@TURN`` it was forked from (the Web UI shows memos)."""
MEMO_IMPORTED_FROM = "imported_from"
"""Memo of an imported session: the id the bundle was exported from."""


@dataclass(frozen=True)
class ForkResult:
    session_id: str
    forked_from: str
    at_turn: int
    rows_copied: int
    next_seq: int


class SessionData:
    """Sessions as data, on ``sessions``' Temporal client and the store behind ``db`` (the
    transcript and workspace database the workers use)."""

    def __init__(self, sessions: SessionClient, db: Database) -> None:
        self.sessions = sessions
        self.db = db

    @property
    def client(self) -> Client:
        return self.sessions.client

    async def fork(
        self,
        session_id: str,
        at_turn: int,
        new_id: str,
        *,
        model: str | None = None,
        system_prompt: str | None = None,
        settings: SessionSettings | None = None,
    ) -> ForkResult:
        """Start ``new_id`` from ``session_id``'s transcript up to turn ``at_turn`` (its
        reply and the tool results answering it). ``settings`` replaces the original's
        whole; ``model`` / ``system_prompt`` change just those. The original is untouched.

        Raises DurableLoopError: SESSION_NOT_FOUND, TURN_OUT_OF_RANGE, INVALID_SESSION_ID,
        SESSION_EXISTS, STALE_VERSION (the facts changed after that turn)."""
        check_session_id(new_id)
        original = await self._start_input(session_id)
        await self._refuse_taken(new_id)
        rows = await transcript_rows(self.db, session_id)
        cut = fork_cut(rows, at_turn)
        kept = [row for row in rows if row.seq < cut]
        chosen = _changed(settings or original.settings, model, system_prompt)
        refuse_unreliable_enforced(chosen)  # before anything is written
        workspace = None
        if _own_workspace(original.settings) and _own_workspace(chosen):
            whole = await workspace_copy(self.db, session_id)
            workspace = _workspace_at(whole, kept, all_kept=len(kept) == len(rows))
        copied = await copy_transcript(self.db, session_id, new_id, cut)
        if workspace is not None:
            await write_workspace(self.db, new_id, workspace)
        origin = f"{session_id}@{at_turn}"
        await self._start(
            new_id, chosen, carried_from(kept, _tail(chosen)), {MEMO_FORKED_FROM: origin}
        )
        return ForkResult(
            session_id=new_id,
            forked_from=origin,
            at_turn=at_turn,
            rows_copied=copied,
            next_seq=cut,
        )

    async def export(self, session_id: str) -> SessionBundle:
        """The session as a bundle (SESSION_NOT_FOUND if Temporal does not know it)."""
        started = await self._start_input(session_id)
        rows = await transcript_rows(self.db, session_id)
        workspace_id = started.settings.workspace.workspace_id or session_id
        workspace = await workspace_copy(self.db, workspace_id)
        described = await self._handle(session_id).describe()
        forked_from = await described.memo_value(MEMO_FORKED_FROM, default=None)
        counted = carried_from(rows, 1)
        return SessionBundle(
            session_id=session_id,
            exported_at=datetime.now(UTC),
            forked_from=forked_from if isinstance(forked_from, str) else None,
            settings=without_secrets(started.settings),
            usage=counted.usage,
            turns=counted.turn_index,
            messages=counted.messages_done,
            rows=rows,
            workspace=workspace,
            decisions=decisions_in(workspace),
        )

    async def import_bundle(
        self, bundle: SessionBundle, new_id: str, *, settings: SessionSettings | None = None
    ) -> WorkflowHandle[SessionInput, SessionEnd]:
        """Recreate ``bundle`` as session ``new_id``: its rows written to this store, its
        workspace too (a workspace the settings name explicitly is left alone if this store
        has it), then the session started where the bundle ended. ``settings`` replaces the
        bundled ones (whose secrets were left out).

        Raises DurableLoopError: INVALID_SESSION_ID, SESSION_EXISTS."""
        check_session_id(new_id)
        chosen = settings or bundle.session_settings()
        refuse_unreliable_enforced(chosen)  # before anything is written
        await self._refuse_taken(new_id)
        await write_transcript(self.db, new_id, bundle.rows)
        workspace_id = chosen.workspace.workspace_id or new_id
        if workspace_id == new_id or not await _has_workspace(self.db, workspace_id):
            await write_workspace(self.db, workspace_id, bundle.workspace)
        carried = carried_from(bundle.rows, _tail(chosen))
        return await self._start(new_id, chosen, carried, {MEMO_IMPORTED_FROM: bundle.session_id})

    # ------------------------------------------------------------------ parts

    def _handle(self, session_id: str) -> WorkflowHandle[SessionInput, SessionEnd]:
        return self.client.get_workflow_handle(
            names.session_workflow_id(session_id), result_type=SessionEnd
        )

    async def _start_input(self, session_id: str) -> SessionInput:
        """The latest run's start input: its settings are the session's current ones."""
        handle = self._handle(session_id)
        try:
            async for event in handle.fetch_history_events(
                page_size=1, rpc_timeout=timedelta(seconds=30)
            ):
                payloads = event.workflow_execution_started_event_attributes.input.payloads
                [started] = await self.client.data_converter.decode(payloads, [SessionInput])
                assert isinstance(started, SessionInput)
                return started
        except RPCError as err:
            if err.status != RPCStatusCode.NOT_FOUND:
                raise
        raise DurableLoopError(ErrorCode.SESSION_NOT_FOUND, f"no session {session_id!r}")

    async def _refuse_taken(self, new_id: str) -> None:
        taken = await has_transcript(self.db, new_id)
        if not taken:
            try:
                await self._handle(new_id).describe()
                taken = True
            except RPCError as err:
                if err.status != RPCStatusCode.NOT_FOUND:
                    raise
        if taken:
            raise DurableLoopError(
                ErrorCode.SESSION_EXISTS, f"session id {new_id!r} is taken: choose a new one"
            )

    async def _start(
        self,
        session_id: str,
        settings: SessionSettings,
        carried: CarriedState,
        origin: dict[str, str],
    ) -> WorkflowHandle[SessionInput, SessionEnd]:
        if self.sessions.search_attributes is None:  # auto, as SessionClient decides it
            try:
                self.sessions.search_attributes = bool(await registered(self.client))
            except RPCError:
                self.sessions.search_attributes = False
        if self.sessions.search_attributes and not settings.search_attributes:
            settings = settings.model_copy(update={"search_attributes": True})
        memo = {MEMO_SESSION: session_id, **origin}
        if settings.title:
            memo[MEMO_TITLE] = settings.title
        workflow_id = names.session_workflow_id(session_id)
        self.sessions.started_workflow_ids.add(workflow_id)
        try:
            return await self.client.start_workflow(
                names.SESSION_WORKFLOW,
                SessionInput(session_id=session_id, settings=settings, carried=carried),
                id=workflow_id,
                task_queue=self.sessions.task_queue,
                id_conflict_policy=WorkflowIDConflictPolicy.FAIL,
                result_type=SessionEnd,
                memo=memo,
            )
        except WorkflowAlreadyStartedError:
            raise DurableLoopError(
                ErrorCode.SESSION_EXISTS, f"session id {session_id!r} is taken: choose a new one"
            ) from None


def _changed(
    settings: SessionSettings, model: str | None, system_prompt: str | None
) -> SessionSettings:
    update: dict[str, object] = {}
    if model is not None:
        update["llm"] = settings.llm.model_copy(update={"model": model})
    if system_prompt is not None:
        update["system_prompt"] = system_prompt
    return settings.model_copy(update=update) if update else settings


def _own_workspace(settings: SessionSettings) -> bool:
    """The session's workspace is its own (named after it), not one it shares."""
    return settings.workspace.workspace_id is None


def _tail(settings: SessionSettings) -> int:
    return settings.runtime.history.transcript_tail


def _workspace_at(whole: WorkspaceCopy, kept: list[RowCopy], *, all_kept: bool) -> WorkspaceCopy:
    """The workspace as it stood when the last kept row was written: audit rows and settled
    proposals up to then. Facts cannot be rebuilt backwards (the audit keeps the ops, not
    the documents before them), so a fork before a later facts change is refused. SQLite
    keeps whole seconds: a facts change in the same second as the last kept row counts as
    later (refused rather than carried on a guess)."""
    if all_kept or not kept or kept[-1].created_at is None:
        return whole
    until = _naive(kept[-1].created_at)

    def when(value: object) -> datetime | None:
        return _naive(value) if isinstance(value, datetime) else None

    def before(value: object) -> bool:
        at = when(value)
        return at is None or at <= until

    for row in whole.audit:
        at = when(row.get("created_at"))
        if row.get("target") == "facts" and (at is None or at >= until):
            raise DurableLoopError(
                ErrorCode.STALE_VERSION,
                "the facts changed after that turn and cannot be rebuilt as they were: fork "
                "at a later turn",
            )
    return whole.model_copy(
        update={
            "audit": [r for r in whole.audit if before(r.get("created_at"))],
            "proposals": [p for p in whole.proposals if before(p.get("decided_at"))],
        }
    )


def _naive(value: datetime) -> datetime:
    return value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value


async def _has_workspace(db: Database, workspace_id: str) -> bool:
    return bool((await workspace_copy(db, workspace_id)).version)
