"""Which sessions have proposals or tool calls waiting for a person, across sessions.

Preferred: the visibility query ``DurableLoopPendingProposals > 0`` (dev server, clusters).
Where the server has no visibility (the time-skipping test server) or the attributes are
not registered, the service falls back to a registry of the sessions it has seen (started
by its SessionClient, messaged, queried); both sources are merged, which also covers
visibility's short lag.
"""

from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from collections.abc import Awaitable
from typing import TypeVar

import jsonpointer
from pydantic import JsonValue
from temporalio.service import RPCError, RPCStatusCode

from durable_loop.client.sessions import SessionClient
from durable_loop.core import names
from durable_loop.core.approvals import ToolApprovalList
from durable_loop.core.proposals import ProposalList
from durable_loop.service.diff import facts_diff
from durable_loop.service.models import (
    PendingItem,
    PendingListing,
    PendingToolCallItem,
    ProposalConflict,
)
from durable_loop.store.workspace import WorkspaceStore
from durable_loop.store.workspace_proposals import proposal_conflicts
from durable_loop.workflows.visibility import MEMO_TITLE

T = TypeVar("T")


async def conflict_of(
    workspace: WorkspaceStore, proposal_id: str, facts: dict[str, JsonValue]
) -> ProposalConflict | None:
    paths = await proposal_conflicts(workspace, proposal_id)
    if not paths:
        return None
    current: dict[str, JsonValue] = {}
    for path in paths:
        try:
            current[path] = jsonpointer.resolve_pointer(facts, path)
        except jsonpointer.JsonPointerException:
            continue
    return ProposalConflict(paths=paths, current=current)


class SessionDirectory:
    def __init__(self, sessions: SessionClient, capacity: int = 10_000) -> None:
        self.sessions = sessions
        self.capacity = capacity
        self._seen: OrderedDict[str, None] = OrderedDict()

    def remember(self, session_id: str) -> None:
        self._seen[session_id] = None
        self._seen.move_to_end(session_id)
        while len(self._seen) > self.capacity:
            self._seen.popitem(last=False)

    def forget(self, session_id: str) -> None:
        self._seen.pop(session_id, None)

    async def candidates(self) -> tuple[list[str], bool]:
        """(session ids, whether the visibility query answered)."""
        try:
            found = await self.sessions.sessions_awaiting_approval()
            used_visibility = True
        except RPCError:
            found, used_visibility = [], False
        prefix = names.session_workflow_id("")
        started = [w.removeprefix(prefix) for w in sorted(self.sessions.started_workflow_ids)]
        merged = list(dict.fromkeys([*found, *reversed(self._seen), *started]))
        return merged, used_visibility

    async def pending(self, workspace: WorkspaceStore | None) -> PendingListing:
        ids, used_visibility = await self.candidates()
        listings = await asyncio.gather(*(self._proposals(sid) for sid in ids))
        held = await asyncio.gather(*(self._tool_calls(sid) for sid in ids))
        items: list[PendingItem] = []
        calls: list[PendingToolCallItem] = []
        for session_id, waiting in zip(ids, held, strict=True):
            for call in waiting.pending if waiting else []:
                pretty = json.dumps(call.arguments, indent=2, sort_keys=True, ensure_ascii=False)
                title = await self._title(session_id)
                calls.append(
                    PendingToolCallItem(
                        session_id=session_id, title=title, call=call, arguments_pretty=pretty
                    )
                )
        calls.sort(key=lambda item: item.call.created_at)
        for session_id, listing in zip(ids, listings, strict=True):
            if listing is None or not listing.pending:
                continue
            title = await self._title(session_id)
            for proposal in listing.pending:
                diff, conflict = None, None
                if workspace is not None:
                    facts = (await workspace.snapshot(proposal.workspace_id)).facts
                    diff = facts_diff(facts, proposal.changes)
                    conflict = await conflict_of(workspace, proposal.proposal_id, facts)
                items.append(
                    PendingItem(
                        session_id=session_id,
                        title=title,
                        proposal=proposal,
                        diff=diff,
                        conflict=conflict,
                    )
                )
        items.sort(key=lambda item: item.proposal.created_at)
        source = "visibility" if used_visibility else "registry"
        return PendingListing(items=items, tool_calls=calls, source=source)

    async def _proposals(self, session_id: str) -> ProposalList | None:
        return await self._query(self.sessions.proposals(session_id), session_id)

    async def _tool_calls(self, session_id: str) -> ToolApprovalList | None:
        return await self._query(self.sessions.tool_approvals(session_id), session_id)

    async def _query(self, query: Awaitable[T], session_id: str) -> T | None:
        try:
            return await query
        except RPCError as err:
            if err.status == RPCStatusCode.NOT_FOUND:
                self.forget(session_id)
            return None
        except Exception:  # a closed run without a worker, a foreign workflow: not listed
            return None

    async def _title(self, session_id: str) -> str | None:
        try:
            described = await self.sessions.handle(session_id).describe()
            title = await described.memo_value(MEMO_TITLE, default=None)
        except (RPCError, TypeError, ValueError):
            return None
        return title if isinstance(title, str) else None
