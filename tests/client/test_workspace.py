"""Reading a session's workspace: its id comes from the session's start input (no worker
needed), the audit rows are the newest ones, oldest first."""

from __future__ import annotations

from durable_loop.client.workspace import document_rows, load_workspace, read_workspace
from durable_loop.core.config import WorkspaceSettings
from durable_loop.store.workspace import ChangeSource
from durable_loop.testing import reply
from tests.conftest import settings_for, unique


async def test_the_workspace_id_is_the_sessions_setting(loop_worker, scripted_llm):
    model, plain, shared = unique("m"), unique("s"), unique("s")
    scripted_llm.script(model, [reply.text("ok")])
    base = settings_for(scripted_llm, model)
    custom = base.model_copy(update={"workspace": WorkspaceSettings(workspace_id="team-ws")})
    async with loop_worker() as w:
        await w.sessions.start(plain, base)
        await w.sessions.start(shared, custom)
        ids = [await w.sessions.workspace_id(plain), await w.sessions.workspace_id(shared)]
    assert ids == [plain, "team-ws"]


async def test_the_newest_audit_rows_come_oldest_first(ws, store_url):
    wid = unique("ws")
    person = ChangeSource(actor="alice", actor_kind="human", comment="set up")
    await ws.create(wid, facts={"title": "T", "meta": {"owner": "bob"}}, source=person)
    for n in range(5):
        await ws.apply(wid, "draft", [{"op": "add", "path": f"/n{n}", "value": n}], person)
    await ws.set_lock(wid, "/meta", person)
    view = await load_workspace(store_url, wid, audit_rows=3)
    everything = await read_workspace(ws, wid, audit_rows=100)
    nothing = await load_workspace(store_url, unique("none"))
    assert view.exists and view.version == 7 and view.locks == ["/meta"]
    assert [(a.op, a.path) for a in view.audit] == [
        ("add", "/n3"),
        ("add", "/n4"),
        ("lock", "/meta"),
    ]
    assert len(everything.audit) == 7 and everything.audit[0].op == "create"
    assert [(r.path, r.value, r.locked) for r in document_rows(view.facts, view.locks)] == [
        ("/meta/owner", "bob", True),
        ("/title", "T", False),
    ]
    assert not nothing.exists and nothing.version == 0 and nothing.audit == []
