"""Decisions need an approver's identity and the audit log is append-only: no code path
updates or deletes an audit row, and any sequence of store operations only appends."""

from __future__ import annotations

import ast
import asyncio
import itertools
from pathlib import Path

import pytest
import pytest_asyncio
from hypothesis import given
from hypothesis import strategies as st
from temporalio.client import WorkflowUpdateFailedError

import durable_loop
from durable_loop.client.proposals import ProposalClient as ApprovalClient
from durable_loop.core.config import WorkspaceSettings
from durable_loop.core.proposals import ProposalDecision, SettleInput
from durable_loop.core.workspace_patch import WorkspaceError
from durable_loop.store import StoreConfig
from durable_loop.store.workspace import (
    ChangeSource,
    WorkspaceStore,
    open_workspace_store,
)
from durable_loop.store.workspace_proposals import get_proposal, propose, settle
from durable_loop.testing import reply
from durable_loop.tools.workspace import workspace_tools
from tests.conftest import settings_for, unique
from tests.hostile.budget import fuzz, hit

PACKAGE = Path(durable_loop.__file__).parent
AUDIT_NAMES = {"AUDIT", "AuditRow", "workspace_audit"}


def _mentions_audit(node: ast.AST) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id in AUDIT_NAMES:
            return True
        if isinstance(sub, ast.Attribute) and sub.attr in AUDIT_NAMES:
            return True
        if isinstance(sub, ast.Constant) and "workspace_audit" in str(sub.value):
            return True
    return False


def audit_mutations(source: str, where: str) -> list[str]:
    """Every ``update(...)`` / ``delete(...)`` (SQLAlchemy or raw SQL) naming the audit
    table in ``source``."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            target = [*node.args, func.value] if isinstance(func, ast.Attribute) else node.args
            if name in {"update", "delete"} and any(_mentions_audit(a) for a in target):
                found.append(f"{where}:{node.lineno}")
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            sql = node.value.lower()
            if "workspace_audit" in sql and ("update " in sql or "delete " in sql):
                found.append(f"{where}:{node.lineno} (raw SQL)")
    return found


def test_no_code_path_updates_or_deletes_audit_rows():
    """The whole package, outside the migrations' schema history."""
    found = [
        hit
        for path in sorted(PACKAGE.rglob("*.py"))
        if "migrations" not in path.parts
        for hit in audit_mutations(path.read_text(), str(path.relative_to(PACKAGE)))
    ]
    assert found == []


@pytest.mark.parametrize(
    "sample",
    [
        "update(AUDIT).values(actor='x')",
        "delete(AuditRow.__table__)",
        "AUDIT.delete().where(AUDIT.c.id == 1)",
        "conn.execute(text('DELETE FROM workspace_audit'))",
        "conn.execute(text('update workspace_audit set actor = 1'))",
    ],
)
def test_the_scan_sees_updates_and_deletes(sample):
    assert audit_mutations(sample, "sample")


def test_the_store_api_has_no_audit_mutator():
    public = [n for n in dir(WorkspaceStore) if not n.startswith("_")]
    assert not [n for n in public if "audit" in n and n != "audit"], public


# ---------------------------------------------------------------- behaviour

LOOP = asyncio.new_event_loop()
SEQUENCE = itertools.count()


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    url = StoreConfig.sqlite_file(tmp_path_factory.mktemp("audit") / "store.db").url
    opened = open_workspace_store(StoreConfig(url=url))
    yield opened
    LOOP.run_until_complete(opened.close())


OPS = st.lists(
    st.one_of(
        st.tuples(
            st.just("apply"),
            st.sampled_from(["draft", "facts"]),
            st.sampled_from(["/title", "/tags", "/n", "/locked"]),
            st.integers(0, 3),
        ),
        st.tuples(st.just("lock"), st.sampled_from(["/locked", "/tags"]), st.booleans()),
        st.tuples(st.just("ui"), st.integers(0, 9)),
        st.tuples(st.just("propose"), st.sampled_from(["/title", "/n"]), st.integers(0, 3)),
        st.tuples(st.just("settle"), st.sampled_from(["confirm", "reject", "expire"])),
        st.tuples(st.just("anonymous"), st.sampled_from(["", "  ", "nul\x00"])),
    ),
    min_size=1,
    max_size=10,
)


async def _step(store: WorkspaceStore, workspace: str, op: tuple, proposals: list[str]) -> None:
    person = ChangeSource(actor="alice", actor_kind="human", session_id="s")
    try:
        if op[0] == "apply":
            change = [{"op": "add", "path": op[2], "value": op[3]}]
            await store.apply(workspace, op[1], change, person)
        elif op[0] == "lock":
            await store.set_lock(workspace, op[1], person, locked=op[2])
        elif op[0] == "ui":
            await store.set_ui_state(workspace, {"tab": op[1]}, person)
        elif op[0] == "propose":
            pid = f"p-{next(SEQUENCE)}"
            change = [{"op": "add", "path": op[1], "value": op[2]}]
            model = ChangeSource(actor="model", actor_kind="model", session_id="s")
            await propose(store, workspace, change, model, proposal_id=pid)
            proposals.append(pid)
        elif op[0] == "settle" and proposals:
            record = await get_proposal(store, proposals[-1])
            assert record is not None
            verdict = op[1]
            await settle(
                store,
                SettleInput(
                    proposal_id=record.proposal_id,
                    workspace_id=workspace,
                    fingerprint=record.fingerprint,
                    verdict=verdict,
                    actor="system:expiry" if verdict == "expire" else "bob",
                    session_id="s",
                ),
            )
        elif op[0] == "anonymous":
            with pytest.raises(WorkspaceError):
                await store.apply(
                    workspace,
                    "draft",
                    [{"op": "add", "path": "/x", "value": 1}],
                    ChangeSource(actor=op[1]),
                )
    except WorkspaceError:
        pass  # a refused change (locked path, ...) writes nothing, which is checked below


@fuzz(100)
@given(ops=OPS)
def test_any_sequence_of_store_operations_only_appends_to_the_audit_log(store, ops):
    hit("audit: store operation sequences")
    workspace = f"ws-{next(SEQUENCE)}"
    LOOP.run_until_complete(store.create(workspace, facts={"title": "t"}))
    proposals: list[str] = []
    seen = LOOP.run_until_complete(store.audit(workspace))
    for op in ops:
        LOOP.run_until_complete(_step(store, workspace, op, proposals))
        now = LOOP.run_until_complete(store.audit(workspace))
        assert now[: len(seen)] == seen, op
        assert all(row.actor.strip() for row in now)
        seen = now


def test_settling_without_a_storable_identity_is_refused_and_writes_nothing(store):
    """Blank approvers, and NUL characters PostgreSQL cannot store, are refused up front."""
    workspace = f"ws-{next(SEQUENCE)}"
    change = [{"op": "replace", "path": "/title", "value": "new"}]

    async def scenario():
        await store.create(workspace, facts={"title": "old"})
        model = ChangeSource(actor="model", actor_kind="model", session_id="s")
        notice = await propose(store, workspace, change, model, proposal_id=f"p-{workspace}")
        before = await store.audit(workspace)
        for actor, comment in (("", None), ("   ", None), ("a\x00b", None), ("bob", "c\x00")):
            inp = SettleInput(
                proposal_id=notice.proposal_id,
                workspace_id=workspace,
                fingerprint=notice.fingerprint,
                verdict="confirm",
                actor=actor,
                comment=comment,
                session_id="s",
            )
            out = await settle(store, inp)
            assert out.status == "failed" and out.error is not None
            assert out.error.code == "INVALID_DECISION"
        record = await get_proposal(store, notice.proposal_id)
        return before, await store.audit(workspace), record, await store.snapshot(workspace)

    before, after, record, snap = LOOP.run_until_complete(scenario())
    assert after == before
    assert record is not None and record.status == "pending" and record.decided_by is None
    assert snap.facts == {"title": "old"}


# ---------------------------------------------------------------- through the workflow


@pytest_asyncio.fixture
async def ws(store_url):
    opened = open_workspace_store(StoreConfig(url=store_url))
    yield opened
    await opened.close()


async def test_a_decision_without_an_approver_is_refused_by_the_session(
    loop_worker, scripted_llm, ws
):
    model, sid = unique("m"), unique("s")
    change = {"changes": [{"op": "replace", "path": "/title", "value": "New"}], "summary": "x"}
    scripted_llm.script(model, [reply.tool_call("facts_propose", change), reply.text("Proposed.")])
    settings = settings_for(scripted_llm, model).model_copy(
        update={"workspace": WorkspaceSettings()}
    )
    async with loop_worker(workspace_tools(ws)) as w:
        await ws.create(sid, facts={"title": "Old"})
        await w.sessions.start(sid, settings)
        assert (await w.sessions.send(sid, "rename")).status == "completed"
        approvals = ApprovalClient(w.sessions.client)
        [pending] = (await approvals.proposals(sid)).pending
        for approver, comment in (("", None), ("  \t", None), ("carol", "ok\x00")):
            decision = ProposalDecision(
                proposal_id=pending.proposal_id,
                verdict="confirm",
                approver=approver,
                comment=comment,
                fingerprint=pending.fingerprint,
            )
            with pytest.raises(WorkflowUpdateFailedError) as err:
                await approvals.decide(sid, decision)
            assert "INVALID_DECISION" in str(err.value.cause)
            await approvals.signal(sid, decision)  # a signal is ignored, not applied
        assert (await approvals.proposals(sid)).pending[0].proposal_id == pending.proposal_id
        assert (await ws.snapshot(sid)).facts == {"title": "Old"}
        confirm = ProposalDecision(
            proposal_id=pending.proposal_id,
            fingerprint=pending.fingerprint,
            verdict="confirm",
            approver="carol",
        )
        result = await approvals.decide(sid, confirm)
    assert (result.status, result.decided_by) == ("committed", "carol")
    facts_rows = [a for a in await ws.audit(sid) if a.target == "facts"]
    assert [(a.actor, a.actor_kind) for a in facts_rows] == [("carol", "human")]
