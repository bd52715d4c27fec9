"""Reading a session's workspace: its id comes from the session's start input (no worker
needed), the audit rows are the newest ones, oldest first, and the decisions on tool calls
read as sentences with the calls' arguments, also when nothing was written to the
workspace itself."""

from __future__ import annotations

import json

from rich.console import Console

from durable_loop.client.workspace import document_rows, load_workspace, read_workspace
from durable_loop.client.workspace_decisions import decision_lines
from durable_loop.client.workspace_render import print_workspace
from durable_loop.core.approvals import tool_call_fingerprint
from durable_loop.core.config import WorkspaceSettings
from durable_loop.core.messages import Message, ToolCall
from durable_loop.core.proposals import DecisionAudit
from durable_loop.store import StoreConfig, open_store
from durable_loop.store.workspace import ChangeSource
from durable_loop.store.workspace_decision_audit import record_decision
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


def held(call_id: str, amount: int) -> ToolCall:
    return ToolCall(id=call_id, name="pay", arguments=json.dumps({"amount": amount, "to": "acme"}))


def decision(sid: str, op: str, actor: str, call_id: str, amount: int, **fields) -> DecisionAudit:
    arguments = {"amount": amount, "to": "acme"}
    value = fields.pop("value", {"fingerprint": tool_call_fingerprint("pay", arguments)})
    return DecisionAudit(
        workspace_id=sid,
        session_id=sid,
        target="tool",
        op=op,
        path="pay",
        actor=actor,
        actor_kind="system" if actor.startswith("system:") else "human",
        call_id=call_id,
        value=value,
        key=unique("k"),
        **fields,
    )


async def test_decisions_without_a_workspace_document_are_shown_with_their_calls(ws, store_url):
    """A session that never wrote to its workspace still has the audit rows of its tool-call
    decisions, each with the call's arguments from the transcript: who approved what."""
    sid = unique("s")
    transcript = open_store(StoreConfig(url=store_url))
    try:
        await transcript.append(
            sid,
            [
                (0, Message.user("pay acme"), {}),
                (1, Message(role="assistant", tool_calls=[held("c1", 120), held("c2", 9)]), {}),
                # a later turn reuses the id c1 (some servers count per turn)
                (4, Message(role="assistant", tool_calls=[held("c1", 5000)]), {}),
            ],
        )
    finally:
        await transcript.close()
    edits = {
        "fingerprint": tool_call_fingerprint("pay", {"amount": 5000, "to": "acme"}),
        "edited_fields": ["amount"],
        "arguments": {"amount": 500, "to": "acme"},
    }
    refusal = {"code": "FINGERPRINT_MISMATCH", "message": "the call changed"}
    for audit in (
        decision(sid, "confirm", "alice", "c1", 120, turn=1, comment="invoice 42"),
        decision(sid, "reject", "bob", "c2", 9, turn=1),
        decision(sid, "refused", "mallory", "c1", 5000, turn=2, value=refusal),
        decision(sid, "edit", "carol", "c1", 5000, turn=2, value=edits),
        decision(sid, "expire", "system:expiry", "c9", 1, turn=3),
    ):
        assert await record_decision(ws, audit)
    await ws.note(
        sid,
        [("budget", "set", "/max_session_tokens", 10_000)],
        ChangeSource(actor="dave", actor_kind="human", session_id=sid),
    )

    view = await load_workspace(store_url, sid, session_id=sid)
    assert not view.exists and view.facts == {} and len(view.audit) == 6
    assert [a.arguments for a in view.audit] == [
        '{"amount": 120, "to": "acme"}',
        '{"amount": 9, "to": "acme"}',
        '{"amount": 5000, "to": "acme"}',  # no fingerprint: the newest call with the id
        '{"amount": 5000, "to": "acme"}',  # by fingerprint: the second c1
        None,  # no such call in the transcript
        None,
    ]
    lines = decision_lines(view)
    assert [line.text for line in lines] == [
        "alice approved tool call c1 (pay, turn 1)",
        "bob rejected tool call c2 (pay, turn 1)",
        "mallory's decision on tool call c1 (pay, turn 2) was refused: "
        "FINGERPRINT_MISMATCH: the call changed",
        "carol approved with edits tool call c1 (pay, turn 2) (changed amount)",
        "tool call c9 (pay, turn 3) expired without a decision",
        "dave set budget max_session_tokens = 10000",
    ]
    assert lines[0].details() == [
        ("arguments", '{"amount": 120, "to": "acme"}'),
        ("comment", "invoice 42"),
    ]
    assert lines[3].details() == [
        ("arguments", '{"amount": 5000, "to": "acme"}'),
        ("ran with", '{"amount": 500, "to": "acme"}'),
    ]

    console = Console(record=True, width=80)
    print_workspace(view, console)
    out = console.export_text()
    assert "nothing written yet" in out and f"workspace {sid} of session {sid}" in out
    flat = " ".join(out.split())
    assert "alice approved tool call c1 (pay, turn 1)" in flat
    assert 'arguments: {"amount": 120, "to": "acme"}' in flat
    assert "comment: invoice 42" in flat
    assert "tool approve pay" in flat and "tool confirm" not in flat
    assert max(len(line) for line in out.splitlines()) <= 80


async def test_a_hold_fingerprint_finds_its_call_by_the_arguments_fingerprint_beside_it(
    ws, store_url
):
    """Under patch decision-rules a decision names the hold (where the call was held), so
    the audit row keeps the arguments' fingerprint beside it: a reused call id still finds
    the call decided on, and a standing approval reads as one line."""
    sid = unique("s")
    transcript = open_store(StoreConfig(url=store_url))
    try:
        await transcript.append(
            sid,
            [
                (1, Message(role="assistant", tool_calls=[held("c1", 120)]), {}),
                (4, Message(role="assistant", tool_calls=[held("c1", 5000)]), {}),
            ],
        )
    finally:
        await transcript.close()
    first = {
        "fingerprint": "f" * 64,
        "arguments_fingerprint": tool_call_fingerprint("pay", {"amount": 120, "to": "acme"}),
    }
    policy = {"condition": None, "created_at": "2026-11-26T10:00:00Z", "expires_at": None}
    for audit in (
        decision(sid, "confirm", "alice", "c1", 120, turn=1, value=first),
        decision(sid, "allow", "alice", "c1", 120, turn=1, value=policy),
    ):
        assert await record_decision(ws, audit)
    view = await load_workspace(store_url, sid, session_id=sid)
    assert view.audit[0].arguments == '{"amount": 120, "to": "acme"}'
    assert [line.text for line in decision_lines(view)] == [
        "alice approved tool call c1 (pay, turn 1)",
        "alice approved every later call of pay",
    ]
