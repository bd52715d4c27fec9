"""Shared by the client, service, browser and observability tests: a session with a
proposal pending, started through a SessionClient that keeps search attributes current."""

from __future__ import annotations

from durable_loop.client.search_attributes import ensure_registered
from durable_loop.core.proposals import PendingProposal
from durable_loop.store import StoreConfig
from durable_loop.store.workspace import WorkspaceStore, open_workspace_store
from durable_loop.testing import reply
from tests.conftest import unique
from tests.workflows.proposal_kit import first_pending, session_settings

RENAME = {
    "changes": [
        {"op": "replace", "path": "/title", "value": "New title"},
        {"op": "add", "path": "/tags/-", "value": "reviewed"},
    ],
    "summary": "rename the document",
}
FACTS = {"title": "Old title", "tags": ["draft"]}


def workspace_store(store_url: str) -> WorkspaceStore:
    return open_workspace_store(StoreConfig(url=store_url))


async def with_search_attributes(w) -> None:
    """Register the DurableLoop* attributes on the test server and turn them on."""
    assert await ensure_registered(w.sessions.client)
    w.sessions.search_attributes = True


async def session_with_proposal(
    w, ws: WorkspaceStore, scripted_llm, env, *, title: str | None = None, **settings
) -> tuple[str, str, PendingProposal]:
    """(model, session id, pending proposal) after one message that proposed RENAME."""
    model, sid = unique("m"), unique("s")
    await ws.create(sid, facts=FACTS)
    scripted_llm.script(
        model, [reply.tool_call("facts_propose", RENAME), reply.text("I proposed a rename.")]
    )
    base = session_settings(scripted_llm, model, env, **settings)
    if title is not None:
        base = base.model_copy(update={"title": title})
    await w.sessions.start(sid, base)
    first = await w.sessions.send(sid, "rename the title")
    assert first.status == "completed", first
    return model, sid, await first_pending(w.sessions.approvals, sid)
