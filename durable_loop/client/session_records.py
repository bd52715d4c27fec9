"""Reading sessions from what Temporal keeps, with no worker needed: a session's trace
(every run's history, plus the transcript store), its workspace id (its start input), and
which sessions wait for a person (visibility)."""

from __future__ import annotations

from temporalio.client import Client

from durable_loop.client.trace.arguments import ARGS_CHARS
from durable_loop.client.trace.fetch import load_trace
from durable_loop.client.trace.models import Trace
from durable_loop.client.trace.replies import REPLY_CHARS
from durable_loop.client.workspace import session_workspace_id
from durable_loop.core import names
from durable_loop.workflows.visibility import PENDING_QUERY


class SessionRecords:
    def __init__(self, client: Client) -> None:
        self.client = client

    async def trace(
        self,
        session_id: str,
        *,
        db_url: str | None = None,
        ui_url: str | None = None,
        args_chars: int | None = ARGS_CHARS,
        reply_chars: int | None = REPLY_CHARS,
    ) -> Trace:
        """Every turn of the session from history (every run) plus, with ``db_url``, the
        transcript store (which also gives each call's arguments, cut at ``args_chars``,
        and each reply whole, cut at ``reply_chars``; None: whole), and the decisions,
        budget changes, cancels and refusals between them."""
        return await load_trace(
            self.client,
            session_id,
            db_url=db_url,
            ui_url=ui_url,
            args_chars=args_chars,
            reply_chars=reply_chars,
        )

    async def workspace_id(self, session_id: str) -> str:
        """The session's workspace id, from its start input (no worker needed)."""
        return await session_workspace_id(self.client, session_id)

    async def sessions_awaiting_approval(self, limit: int = 200) -> list[str]:
        """Session ids with pending proposals or held tool calls, by the
        ``DurableLoopPendingProposals > 0``
        visibility query (needs the search attributes and a server with visibility: the
        dev server or a cluster; the time-skipping test server raises UNIMPLEMENTED)."""
        found: list[str] = []
        query = f'WorkflowType = "{names.SESSION_WORKFLOW}" AND {PENDING_QUERY}'
        async for execution in self.client.list_workflows(query, limit=limit):
            prefix = names.session_workflow_id("")
            if execution.id.startswith(prefix):
                found.append(execution.id.removeprefix(prefix))
        return found
